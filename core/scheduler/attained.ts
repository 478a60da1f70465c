/**
 * What each job has received of the GPU, as `salus jobs` shows it beside its share:
 * its part of the GPU time given to the jobs that are live now (queued, running or
 * paused). Under FAIR the parts follow the shares (3 and 1: 0.75 and 0.25).
 */
import { FINAL_STATES, type JobInfo } from '../protocol/state.js';

/**
 * The rows with `attainedFraction` set: attainedMs / Σ attainedMs of the live rows, for a
 * live row; null for an ended one, and for all while no live job has received any time.
 */
export function withAttainedFractions(rows: readonly JobInfo[]): JobInfo[] {
  const live = (row: JobInfo) => !FINAL_STATES.includes(row.state);
  const totalMs = rows.reduce((sum, row) => sum + (live(row) ? row.attainedMs : 0), 0);
  return rows.map((row) => ({ ...row, attainedFraction: live(row) && totalMs > 0 ? row.attainedMs / totalMs : null }));
}
