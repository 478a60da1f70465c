/**
 * Job history as plain JSON: what `salus history --json` prints. Every job the
 * service saw is kept in its data folder (core/history), across restarts and
 * crashes; the newest ones of earlier runs also appear in `salus jobs` and the
 * panel, marked `fromEarlierRun`.
 */
import type { JobHints, JobInfo, JobState } from './state.js';

/** What was asked for: enough to run the job again. */
export interface JobSpec {
  name: string;
  /** The job's module, as its process started or the panel launched it; null when unknown (a client that did not say). */
  file: string | null;
  /** Its arguments (from its process, at most 32 of at most 1,024 characters; in full when the panel launched it). */
  args: string[];
  hints: JobHints;
  priority: number;
}

/** One change of a job's state, as recorded. Times are epoch milliseconds. */
export interface HistoryStateChange {
  at: number;
  state: JobState;
  /** Why, when there is more to say (an error, "lost with the service"). */
  message: string | null;
}

/**
 * One sample of a job's progress. Between two samples, the mean iteration time
 * is Δ attainedMs / Δ itersDone. A job keeps at most HISTORY_SERIES_MAX_POINTS;
 * past that, every other sample is dropped and sampling slows by half.
 */
export interface IterationSample {
  at: number;
  itersDone: number;
  attainedMs: number;
}

/** Samples kept per job in its iteration series. */
export const HISTORY_SERIES_MAX_POINTS = 240;

/** One row of `salus history --json`: the job's last recorded JobInfo and its story. */
export interface HistoryEntry extends JobInfo {
  /** Which start of the service ran it (1, 2, …, per data folder). */
  runId: number;
  fromEarlierRun: boolean;
  /** The job was queued, running or paused when its service stopped or died; it is shown as failed. */
  lost: boolean;
  spec: JobSpec;
  stateChanges: HistoryStateChange[];
  iterationSeries: IterationSample[];
}

/** `salus history`'s filters; every one optional. */
export interface HistoryFilter {
  /** Only jobs in these states. */
  states?: JobState[];
  /** Only jobs whose name matches this glob (`*`, `?`, `[abc]`; case-sensitive). */
  name?: string;
  /** Only jobs submitted at or after this time (epoch milliseconds). */
  sinceMs?: number;
  /** At most this many, newest first (default HISTORY_DEFAULT_LIMIT). */
  limit?: number;
}

/** How many jobs `salus history` lists when not told. */
export const HISTORY_DEFAULT_LIMIT = 50;
