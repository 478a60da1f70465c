/**
 * The job table. Each `jobs` event replaces the whole list; rows whose fields
 * did not change keep their object identity, so memoized rows and narrow
 * selectors skip the work when the service repeats itself ten times a second.
 */
import type { StateCreator } from 'zustand';
import { assignJobColors } from '../colors.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import type { PanelState } from './panelStore.js';

/** The job table and its one action. */
export interface JobsSlice {
  /** Jobs in the service's order. */
  jobs: JobInfo[];
  /** The same jobs by id. */
  jobsById: Record<string, JobInfo>;
  /** Replaces the table with `jobs`, reusing unchanged rows. */
  applyJobs(jobs: JobInfo[]): void;
}

/** Equal when every field is `===`, or a plain object whose fields are (JobInfo nests one level). */
export function sameJob(a: JobInfo, b: JobInfo): boolean {
  const keysA = Object.keys(a) as Array<keyof JobInfo>;
  if (keysA.length !== Object.keys(b).length) return false;
  for (const key of keysA) {
    const va = a[key];
    const vb = b[key];
    if (va === vb) continue;
    if (typeof va !== 'object' || typeof vb !== 'object' || va === null || vb === null) return false;
    const inner = Object.keys(va) as Array<keyof typeof va>;
    if (inner.length !== Object.keys(vb).length) return false;
    for (const k of inner) if (va[k] !== vb[k]) return false;
  }
  return true;
}

/** Builds the next table from `incoming`, keeping `previous` objects (and the array) where nothing changed. */
export function reconcileJobs(previous: Record<string, JobInfo>, previousList: JobInfo[], incoming: JobInfo[]): {
  jobs: JobInfo[];
  jobsById: Record<string, JobInfo>;
} {
  const jobsById: Record<string, JobInfo> = {};
  let unchanged = incoming.length === previousList.length;
  const jobs = incoming.map((job, index) => {
    const before = previous[job.id];
    const kept = before && sameJob(before, job) ? before : job;
    if (kept !== previousList[index]) unchanged = false;
    jobsById[job.id] = kept;
    return kept;
  });
  return unchanged ? { jobs: previousList, jobsById: previous } : { jobs, jobsById };
}

/** The jobs slice, empty until the first snapshot. */
export const createJobsSlice: StateCreator<PanelState, [], [], JobsSlice> = (set, get) => ({
  jobs: [],
  jobsById: {},
  applyJobs(incoming) {
    const { jobs, jobsById } = get();
    const next = reconcileJobs(jobsById, jobs, incoming);
    if (next.jobs === jobs) return;
    // Colours follow the service's order, so they survive a reload.
    assignJobColors(next.jobs.map((job) => job.id));
    set(next);
  },
});
