/**
 * The cluster's Salus jobs as Slurm sees them (issue 12): one row of
 * `salus jobs --cluster --json`, and the panel's "cluster jobs" answer, which
 * says so instead of failing where this machine has no Slurm.
 */

/** One row of `salus jobs --cluster --json`. Times are epoch milliseconds; null until they happen. */
export interface ClusterJob {
  slurmJobId: string;
  name: string;
  user: string;
  /** Slurm's state: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, … */
  state: string;
  /** The node Slurm put it on; null while pending. */
  node: string | null;
  partition: string;
  submittedAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  /** The batch script's exit code once it ended (null before, or where squeue does not say). */
  exitCode: number | null;
  /** Its output file as Slurm was given it (`%j` and friends unexpanded), where squeue says. */
  output: string | null;
}

/** The panel's `clusterJobs()`: the jobs, or why there are none to ask for (no Slurm here). */
export type ClusterJobs =
  | { available: true; jobs: ClusterJob[] }
  | { available: false; reason: string };

/** Slurm states in which a job can still be cancelled. */
export const CANCELLABLE_SLURM_STATES: readonly string[] = ['PENDING', 'CONFIGURING', 'RUNNING', 'SUSPENDED', 'REQUEUED', 'RESIZING'];

/** What a Slurm job id looks like (digits, or ARRAY_TASK), checked before one reaches `scancel`. */
export const SLURM_JOB_ID = /^\d{1,20}(?:_\d{1,20})?$/;
