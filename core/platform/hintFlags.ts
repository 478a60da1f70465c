/** The scheduling hints `salus run` and `salus submit` take as flags: --duration and --share. */
import type { JobHints } from '../protocol/state.js';
import { parseDurationMs } from './duration.js';

/** --duration (e.g. 90s, 5m, 1h30m) and --share (a number above 0) as hints; throws an Error naming the flag. */
export function schedulingHintFlags(values: { duration?: string; share?: string }): Pick<JobHints, 'durationMs' | 'share'> {
  let durationMs: number | undefined;
  try {
    durationMs = values.duration === undefined ? undefined : parseDurationMs(values.duration);
  } catch (error) {
    throw new Error(`--duration: ${(error as Error).message}`);
  }
  const share = values.share === undefined ? undefined : Number(values.share);
  if (share !== undefined && !(Number.isFinite(share) && share > 0)) throw new Error(`--share must be a number above 0, got '${values.share}'`);
  return { durationMs, share };
}
