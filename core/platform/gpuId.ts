/** GPU ids as users type them: the service's GPUs are `gpu0`, `gpu1`, … in the order it opened them. */

/** The id of the GPU at `index` of the service's list. */
export const gpuIdAt = (index: number): string => `gpu${index}`;

/** `gpu1` for `gpu1` or `1`; throws on anything else. */
export function normalizeGpuId(text: string): string {
  const match = /^(?:gpu)?(\d{1,4})$/i.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a GPU id (gpu0, gpu1, … or 0, 1, …)`);
  return gpuIdAt(Number(match[1]));
}
