/**
 * Derived views of the job table: progress, ETA, filtering and sorting. Pure
 * functions over `JobInfo`, plus one memoized selector for the queue's rows.
 */
import { FINAL_STATES, type JobInfo, type JobState } from '../../../core/protocol/state.js';
import type { PanelState } from './panelStore.js';
import type { JobFilter, JobSort, JobSortKey } from './uiSlice.js';

/** Whether the job can still run (queued, running or paused). */
export function isActive(job: JobInfo): boolean {
  return !FINAL_STATES.includes(job.state);
}

/** Iterations done and declared, as the panel shows them: done never reads past the total (a job may run more than it declared). */
export function shownIterations(job: JobInfo): { done: number; total: number | null } {
  const { done, total } = job.iterations;
  return { done: total === null ? done : Math.min(done, total), total };
}

/** Iterations done as a share of the total, 0..1; null when the total is unknown. */
export function progressShare(job: JobInfo): number | null {
  const { done, total } = job.iterations;
  if (total === null || total <= 0) return null;
  return Math.min(1, done / total);
}

/** Time left: remaining iterations × mean iteration time; null when either is unknown or the job has ended. */
export function etaMs(job: JobInfo): number | null {
  const { done, total } = job.iterations;
  if (!isActive(job) || total === null || job.avgIterationMs === null) return null;
  return Math.max(0, total - done) * job.avgIterationMs;
}

/** Order of states when sorting by state: what needs attention first. */
const STATE_RANK: Record<JobState, number> = { running: 0, paused: 1, queued: 2, failed: 3, done: 4, killed: 5 };

/** Sort value of a job for a column; null sorts last in either direction. */
function sortValue(job: JobInfo, key: JobSortKey): number | string | null {
  switch (key) {
    case 'state': return STATE_RANK[job.state];
    case 'name': return job.name.toLowerCase();
    case 'priority': return job.priority;
    case 'progress': return progressShare(job);
    case 'eta': return etaMs(job);
    case 'avgIteration': return job.avgIterationMs;
    case 'persistent': return job.memory.persistentBytes;
    case 'ephemeral': return job.memory.ephemeralPeakBytes;
    case 'gpu': return job.gpu ?? null;
    case 'lane': return job.lane;
    case 'submitted': return job.submittedAt;
  }
}

/** Compares two jobs by `sort`; ties fall back to submission time, then id, so the order is total. */
export function compareJobs(a: JobInfo, b: JobInfo, sort: JobSort): number {
  const va = sortValue(a, sort.key);
  const vb = sortValue(b, sort.key);
  if (va !== vb) {
    if (va === null) return 1;
    if (vb === null) return -1;
    const order = va < vb ? -1 : 1;
    return sort.descending ? -order : order;
  }
  if (a.submittedAt !== b.submittedAt) return a.submittedAt - b.submittedAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a job passes the queue's filter. */
export function matchesFilter(job: JobInfo, filter: JobFilter): boolean {
  switch (filter.state) {
    case 'all': break;
    case 'active': if (!isActive(job)) return false; break;
    case 'finished': if (isActive(job)) return false; break;
    default: if (job.state !== filter.state) return false;
  }
  const text = filter.text.trim().toLowerCase();
  return text === '' || job.name.toLowerCase().includes(text) || job.id.toLowerCase().includes(text);
}

/** Ids of the jobs the queue shows, filtered and sorted. */
export function visibleJobIds(jobs: JobInfo[], sort: JobSort, filter: JobFilter): string[] {
  return jobs.filter((job) => matchesFilter(job, filter)).sort((a, b) => compareJobs(a, b, sort)).map((job) => job.id);
}

let memo: { jobs: JobInfo[]; sort: JobSort; filter: JobFilter; ids: string[] } | null = null;

/**
 * `visibleJobIds` for the store's state, recomputed only when the table, the
 * sort or the filter changed (they keep identity otherwise). Use with
 * `useShallow` so the queue re-renders only when the row order changes.
 */
export function selectVisibleJobIds(state: PanelState): string[] {
  if (memo && memo.jobs === state.jobs && memo.sort === state.sort && memo.filter === state.filter) return memo.ids;
  memo = { jobs: state.jobs, sort: state.sort, filter: state.filter, ids: visibleJobIds(state.jobs, state.sort, state.filter) };
  return memo.ids;
}

/** How many jobs are in each state (every state present, zeros included). */
export function countByState(jobs: JobInfo[]): Record<JobState, number> {
  const counts: Record<JobState, number> = { queued: 0, running: 0, paused: 0, done: 0, failed: 0, killed: 0 };
  for (const job of jobs) counts[job.state] += 1;
  return counts;
}

/** Whether the service shares more than one GPU (the queue then shows each job's GPU). */
export function selectMultiGpu(state: PanelState): boolean {
  return (state.memory?.gpus?.length ?? 1) > 1;
}
