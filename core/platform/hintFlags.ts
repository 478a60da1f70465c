/** The scheduling hints `salus run` and `salus submit` take as flags: --duration, --share and (`salus run`) --gpu. */
import type { JobHints } from '../protocol/state.js';
import { parseDurationMs } from './duration.js';
import { normalizeGpuId } from './gpuId.js';

/** --duration (e.g. 90s, 5m, 1h30m), --share (a number above 0) and --gpu (gpu1 or 1) as hints; throws an Error naming the flag. */
export function schedulingHintFlags(values: { duration?: string; share?: string; gpu?: string }): Pick<JobHints, 'durationMs' | 'share' | 'gpu'> {
  let durationMs: number | undefined;
  try {
    durationMs = values.duration === undefined ? undefined : parseDurationMs(values.duration);
  } catch (error) {
    throw new Error(`--duration: ${(error as Error).message}`);
  }
  const share = values.share === undefined ? undefined : Number(values.share);
  if (share !== undefined && !(Number.isFinite(share) && share > 0)) throw new Error(`--share must be a number above 0, got '${values.share}'`);
  let gpu: string | undefined;
  try {
    gpu = values.gpu === undefined ? undefined : normalizeGpuId(values.gpu);
  } catch (error) {
    throw new Error(`--gpu: ${(error as Error).message}`);
  }
  return { durationMs, share, gpu };
}
