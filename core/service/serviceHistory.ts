/** What the service asks of its job history (core/history), when it keeps one. */
import type { HistoryEntry, HistoryFilter } from '../protocol/history.js';
import type { JobInfo } from '../protocol/state.js';

/** The service's view of its history: earlier runs' jobs for its table, and `salus history`. */
export interface ServiceHistory {
  /** The newest jobs of this service's earlier runs, oldest first, marked `fromEarlierRun`. */
  readonly earlierJobs: JobInfo[];
  /** This run's first job number, so `job-N` ids stay unique across runs. */
  readonly firstJobNumber: number;
  /** The output tail kept for a recorded job of this service (the newest with that id), or null when none is. */
  output(id: string): string | null;
  /** `salus history`: recorded jobs of every run, newest first. */
  list(filter: HistoryFilter): HistoryEntry[];
  /** What the newest clean run of `file` with `args` measured of its memory, or null (core/history/store.ts). */
  measuredProfile(file: string, args: readonly string[]): MeasuredProfile | null;
}

/** A job's memory as an earlier run of the same program measured it: what admission uses when a job declares none. */
export interface MeasuredProfile {
  /** The job (and the service run) that measured it. */
  jobId: string;
  runId: number;
  /** Its state between iterations (`stateBytes`). */
  persistentBytes: number;
  /** Its largest iteration's ephemeral memory. */
  ephemeralBytes: number;
}
