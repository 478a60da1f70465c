/**
 * GPU ids as users type them (the service's GPUs are `gpu0`, `gpu1`, … in the
 * order it opened them), and `--memory` with a size for each.
 */
import { parseSize } from './size.js';

/** The id of the GPU at `index` of the service's list. */
export const gpuIdAt = (index: number): string => `gpu${index}`;

/** `gpu1` for `gpu1` or `1`; throws on anything else. */
export function normalizeGpuId(text: string): string {
  const match = /^(?:gpu)?(\d{1,4})$/i.exec(text.trim());
  if (!match) throw new Error(`'${text}' is not a GPU id (gpu0, gpu1, … or 0, 1, …)`);
  return gpuIdAt(Number(match[1]));
}

/** `--memory` read: a size for every GPU, and sizes of single GPUs by id (which win). */
export interface GpuMemoryFlag {
  eachBytes?: number;
  byGpu: Record<string, number>;
}

/** Reads `--memory`: `SIZE` (every GPU), `ID=SIZE,…` (each its own), or both (`4GiB,gpu1=2GiB`). Throws naming what is wrong. */
export function parseGpuMemory(text: string): GpuMemoryFlag {
  const flag: GpuMemoryFlag = { byGpu: {} };
  for (const item of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const split = item.indexOf('=');
    if (split < 0) {
      flag.eachBytes = parseSize(item);
      continue;
    }
    flag.byGpu[normalizeGpuId(item.slice(0, split))] = parseSize(item.slice(split + 1));
  }
  if (flag.eachBytes === undefined && Object.keys(flag.byGpu).length === 0) throw new Error(`invalid size "${text}"`);
  return flag;
}
