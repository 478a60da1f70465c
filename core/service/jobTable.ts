/**
 * The job table: every job of this run, by id, and the one place a job's state
 * changes. `transition` checks each change against JOB_TRANSITIONS, stamps the
 * times that go with it (started at the first `running`, finished at a final
 * state) and fires `onDidChangeJob`, then `onDidFinishJob` for a final state.
 * A change the table does not allow is a bug of the service, and throws.
 */
import type { Hello } from '../protocol/messages.js';
import { FINAL_STATES, type JobHints, type JobState } from '../protocol/state.js';
import { Emitter, type Event } from './events.js';
import type { JobPeer, JobRecord } from './jobRecord.js';

/**
 * Where a job may go from each state. A queued job may end without ever
 * running (killed, refused, or its process exited before asking for a device);
 * a running job pauses and resumes between iterations; the last three are final.
 */
export const JOB_TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  queued: ['running', 'done', 'failed', 'killed'],
  running: ['paused', 'done', 'failed', 'killed'],
  paused: ['running', 'done', 'failed', 'killed'],
  done: [],
  failed: [],
  killed: [],
};

/** A final state a job ends in. */
export type FinalState = 'done' | 'failed' | 'killed';

/** One change of a job's state. */
export interface JobStateChange {
  job: JobRecord;
  from: JobState;
  to: JobState;
}

/** Finished jobs kept in the table (older ones stay in the history, when kept). */
export const MAX_FINISHED_JOBS = 500;

/** The job record as the table writes it. */
type WritableJob = { -readonly [K in keyof JobRecord]: JobRecord[K] };

/** Whether `state` is final: the job never leaves it. */
export function isFinal(state: JobState): boolean {
  return FINAL_STATES.includes(state);
}

export class JobTable {
  private readonly jobs = new Map<string, JobRecord>();
  private nextNumber = 1;
  private readonly didOpen = new Emitter<JobRecord>();
  private readonly didChange = new Emitter<JobStateChange>();
  private readonly didFinish = new Emitter<JobRecord>();

  /** A job connected and was given its record (state `queued`). */
  readonly onDidOpenJob: Event<JobRecord> = this.didOpen.event;
  /** A job's state changed (after the change). */
  readonly onDidChangeJob: Event<JobStateChange> = this.didChange.event;
  /** A job reached a final state (after `onDidChangeJob`). */
  readonly onDidFinishJob: Event<JobRecord> = this.didFinish.event;

  /** Job numbers go on from `first` (a history's next number), so ids stay unique across runs. */
  continueNumbering(first: number): void {
    this.nextNumber = Math.max(this.nextNumber, first);
  }

  /** Adds a job for a hello, `queued`, and drops the oldest finished jobs past MAX_FINISHED_JOBS. */
  open(hello: Hello, peer: JobPeer | null, now = Date.now()): JobRecord {
    const id = `job-${this.nextNumber++}`;
    const hints: JobHints = hello.hints ?? {};
    const job: JobRecord = {
      id, name: hello.name || id, state: 'queued', hints, priority: hints.priority ?? 0,
      pid: hello.pid ?? null, submittedAt: now, startedAt: null, finishedAt: null, closedAt: null, error: null,
      laneId: null, gpuId: null, peer, session: null, exitCode: null, killed: false, iterationSource: 'inferred', final: null,
      output: '', gpuErrors: { count: 0, first: null }, file: hello.file ?? null, args: hello.args ?? [],
    };
    this.jobs.set(id, job);
    this.trimFinished();
    this.didOpen.fire(job);
    return job;
  }

  /**
   * Moves `job` to `to`. Entering `running` the first time stamps `startedAt`;
   * a final state stamps `finishedAt` (when its connection closed, if it did).
   */
  transition(job: JobRecord, to: JobState, now = Date.now()): void {
    const from = job.state;
    if (!JOB_TRANSITIONS[from].includes(to)) throw new Error(`salus: ${job.id} cannot go from ${from} to ${to}`);
    const writable = job as WritableJob;
    writable.state = to;
    if (to === 'running') writable.startedAt ??= now;
    if (isFinal(to)) writable.finishedAt = job.closedAt ?? now;
    this.didChange.fire({ job, from, to });
    if (isFinal(to)) this.didFinish.fire(job);
  }

  /** The job with `id` in this run, if any. */
  get(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  has(id: string): boolean {
    return this.jobs.has(id);
  }

  /** Every job of this run, oldest first. */
  values(): IterableIterator<JobRecord> {
    return this.jobs.values();
  }

  /** Jobs not in a final state. */
  live(): JobRecord[] {
    return [...this.jobs.values()].filter((job) => !isFinal(job.state));
  }

  /** The newest job of process `pid`, finished or not. */
  newestByPid(pid: number): JobRecord | undefined {
    return [...this.jobs.values()].reverse().find((job) => job.pid === pid);
  }

  private trimFinished(): void {
    const finished = [...this.jobs.values()].filter((job) => job.finishedAt !== null);
    for (const job of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_JOBS))) this.jobs.delete(job.id);
  }

  dispose(): void {
    this.didOpen.dispose();
    this.didChange.dispose();
    this.didFinish.dispose();
  }
}
