/**
 * The admission queue: jobs that asked for their first device and wait for
 * memory, in arrival order, each with the device requests it is owed an answer
 * for. `admitWaiting` runs the admission loop of core/memory/placement.ts (the
 * simulator runs the same) over the service's GPUs and says who was admitted to
 * which GPU and lane and who can never fit; the service acts on that. Why a job
 * waits is kept for its `queued` message and logged once per change.
 */
import { admitInArrivalOrder, placeJob, type PlacementTarget } from '../memory/placement.js';
import { formatBytes } from '../platform/size.js';
import type { JobHints } from '../protocol/state.js';
import type { JobRecord } from './jobRecord.js';
import type { MeasuredProfile, ServiceHistory } from './serviceHistory.js';

/** What became of a waiting job: admitted to a lane, or refused for good. Its owed request ids come along. */
export type AdmissionOutcome =
  | { kind: 'admitted'; job: JobRecord; gpuId: string; laneId: string; rids: number[] }
  | { kind: 'refused'; job: JobRecord; reason: string; rids: number[] };

export interface AdmissionQueueDeps {
  /** The GPUs a job may go to, in their order (core/memory/placement.ts). */
  targets: () => readonly PlacementTarget[];
  /** The job history, for what earlier runs of a program measured (null: none kept). */
  history: () => ServiceHistory | null;
  log: (line: string) => void;
}

export class AdmissionQueue {
  private readonly waiting: JobRecord[] = [];
  /** Request ids of each waiting job's requestDevice calls, oldest first. */
  private readonly rids = new Map<string, number[]>();
  private readonly reasons = new Map<string, string>();
  /** What an earlier clean run of a waiting job's program measured, for a job that declares no memory (null: none). */
  private readonly measured = new Map<string, MeasuredProfile | null>();

  constructor(private readonly deps: AdmissionQueueDeps) {}

  /** Whether `job` waits here. */
  has(job: JobRecord): boolean {
    return this.rids.has(job.id);
  }

  /** `job` asks for a device (request `rid`): it joins the queue, or, already waiting, is owed one more answer. */
  add(job: JobRecord, rid: number): void {
    const owed = this.rids.get(job.id);
    if (owed) {
      owed.push(rid);
      return;
    }
    this.rids.set(job.id, [rid]);
    this.waiting.push(job);
  }

  /** Why `jobId` waits, as last said. */
  waitReason(jobId: string): string | undefined {
    return this.reasons.get(jobId);
  }

  /** Takes `job` out of the queue (it ended while waiting); its owed requests are dropped with it. */
  remove(job: JobRecord): void {
    const at = this.waiting.indexOf(job);
    if (at >= 0) this.waiting.splice(at, 1);
    this.rids.delete(job.id);
    this.reasons.delete(job.id);
  }

  /** Forgets what was looked up for `jobId` (it ended). */
  forget(jobId: string): void {
    this.measured.delete(jobId);
  }

  /** Tries every waiting job in arrival order; returns those that left the queue. */
  admitWaiting(): AdmissionOutcome[] {
    const targets = this.deps.targets();
    const place = (job: JobRecord) => placeJob({
      jobId: job.id, ...this.admissionHints(job), gpu: job.hints.gpu, expectedPersistentBytes: this.measured.get(job.id)?.persistentBytes,
    }, targets);
    const steps = admitInArrivalOrder(this.waiting, place, (job, reason) => {
      if (this.reasons.get(job.id) !== reason) this.deps.log(`salus: ${job.id} waits: ${reason}`);
      this.reasons.set(job.id, reason);
      job.error = null;
    });
    return steps.map(({ item: job, result }): AdmissionOutcome => {
      const rids = this.rids.get(job.id) ?? [];
      this.remove(job);
      this.measured.delete(job.id);
      return result.kind === 'admitted'
        ? { kind: 'admitted', job, gpuId: result.gpuId, laneId: result.laneId, rids }
        : { kind: 'refused', job, reason: result.reason, rids };
    });
  }

  /**
   * The memory a waiting job asks admission for: what it declared, else the largest iteration that the newest
   * clean run of the same file and arguments measured, so its lane has room for its iterations before the
   * first one (ephemeral memory cannot page). Its persistent memory is not reserved from the profile: it is
   * counted as it is allocated, and may page, so a program that ran before is never held back where it would
   * run slower by paging. A job seen for the first time is admitted on nothing and measured as it runs.
   */
  private admissionHints(job: JobRecord): JobHints {
    const { persistentBytes, ephemeralBytes } = job.hints;
    const history = this.deps.history();
    if (persistentBytes !== undefined || ephemeralBytes !== undefined || !job.file || !history) return job.hints;
    if (!this.measured.has(job.id)) {
      const profile = history.measuredProfile(job.file, job.args);
      this.measured.set(job.id, profile);
      if (profile) {
        this.deps.log(`salus: ${job.id} declares no memory; ${profile.jobId} (run ${profile.runId}) ran it and measured ` +
          `${formatBytes(profile.persistentBytes)} of state and ${formatBytes(profile.ephemeralBytes)} per iteration: its lane makes room for that`);
      }
    }
    const profile = this.measured.get(job.id);
    return profile ? { ...job.hints, ephemeralBytes: profile.ephemeralBytes } : job.hints;
  }
}
