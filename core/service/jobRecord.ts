/**
 * The service's record of a job (the one JobRecord type), and how it reads as
 * JobInfo JSON. Its state and the times that go with it are read-only here:
 * only the job table (jobTable.ts) changes them, through its transition table.
 */
import type { GpuErrorTally, JobHints, JobInfo, JobMemoryUse, JobState } from '../protocol/state.js';
import type { GpuErrorJson } from '../protocol/commands.js';
import type { Session } from '../executor/session.js';
import type { MemoryManager } from '../memory/types.js';
import type { ServerMessage } from '../protocol/messages.js';

/** Who the OS says holds a job's connection (core/server/peerProcess.ts's PeerSocket, as the service needs it). */
export interface IdentifiedPeer {
  pids: readonly number[];
}

/** How the service talks back to a job's connection. */
export interface JobPeer {
  send(message: ServerMessage, payload?: Uint8Array[]): void;
  /** Ends the connection (after what was sent). */
  close(): void;
  /**
   * The job's processes that the OS says hold this connection now (core/server/peerProcess.ts),
   * for `salus kill` to signal; empty when they cannot be verified. Never the job's own claim alone.
   */
  verifiedPids(claimedPid: number | null): number[];
  /** Null while the job keeps up with its replies; else resolves once it has read enough of them. */
  whenWritable(): Promise<void> | null;
}

export interface JobRecord {
  readonly id: string;
  name: string;
  /** Written by JobTable.transition only. */
  readonly state: JobState;
  hints: JobHints;
  priority: number;
  pid: number | null;
  readonly submittedAt: number;
  /** When it was first admitted (JobTable.transition). */
  readonly startedAt: number | null;
  /** When it ended (JobTable.transition). */
  readonly finishedAt: number | null;
  /** When the job's connection closed (its memory returned), before its exit status is known. */
  closedAt: number | null;
  error: string | null;
  laneId: string | null;
  /** The GPU admission placed it on (serviceGpu.ts); kept after it ends, null until placed. */
  gpuId: string | null;
  peer: JobPeer | null;
  session: Session | null;
  /** Exit code from the job's goodbye or its launcher's report. */
  exitCode: number | null;
  killed: boolean;
  /** How its iterations were marked, kept after the session ends. */
  iterationSource: 'sdk' | 'inferred';
  /** Last stats kept after the scheduler forgets the job. */
  final: JobLiveStats | null;
  /** Captured output of jobs the service launched itself (bounded). */
  output: string;
  /** The job's module and arguments, as its hello said (null and [] when it did not). */
  file: string | null;
  args: string[];
  /** Uncaptured GPU errors of the job's work; kept after it ends, so a `done` job that raised errors says so. */
  gpuErrors: GpuErrorTally;
}

/** Counts an uncaptured GPU error of the job; returns true for its first. */
export function recordGpuError(job: JobRecord, error: GpuErrorJson): boolean {
  job.gpuErrors.count += 1;
  if (job.gpuErrors.first) return false;
  job.gpuErrors.first = { type: error.type, message: error.message.slice(0, 2000) };
  return true;
}

/** Keeps the last `maxChars` of a job's output. */
export function appendOutput(job: JobRecord, text: string, maxChars = 256 * 1024): void {
  job.output = (job.output + text).slice(-maxChars);
}

/** Live numbers for a running job, from the scheduler and the memory ledger. */
export interface JobLiveStats extends JobMemoryUse {
  itersDone: number;
  attainedMs: number;
  queuedMs: number;
  avgIterationMs: number | null;
  persistentBytes: number;
  ephemeralPeakBytes: number;
}

/** A job's memory use: where its bytes are (the memory manager) and what its last iteration touched (its session). */
export function jobMemoryUse(job: JobRecord, memory: MemoryManager): JobMemoryUse {
  const residency = memory.residency(job.id);
  const workingSet = job.session?.workingSet;
  return {
    ...residency,
    workingSetBytes: workingSet?.workingSetBytes ?? 0,
    liveInBytes: workingSet?.liveInBytes ?? 0,
    writtenFirstBytes: workingSet?.writtenFirstBytes ?? 0,
  };
}

/** JobInfo JSON (DESIGN.md "JSON shapes") for a record and its live stats. */
export function toJobInfo(job: JobRecord, live: JobLiveStats | null): JobInfo {
  const stats = live ?? job.final;
  return {
    id: job.id,
    name: job.name,
    state: job.state,
    priority: job.priority,
    share: job.hints.share ?? 1,
    // A job that runs past its declared total reads as done with it, never as more than all of it.
    iterations: { done: Math.min(stats?.itersDone ?? 0, job.hints.iterations ?? Infinity), total: job.hints.iterations ?? null },
    memory: {
      // A job that ended holds nothing any more; its peak stays as a record.
      persistentBytes: live ? live.persistentBytes : 0,
      ephemeralPeakBytes: Math.max(stats?.ephemeralPeakBytes ?? 0, 0) || (job.hints.ephemeralBytes ?? 0),
      residentBytes: live ? live.residentBytes : 0,
      pagedOutBytes: live ? live.pagedOutBytes : 0,
      // The last measured state stays as a record, like the ephemeral peak.
      stateBytes: stats?.stateBytes ?? 0,
      // What the last iteration used stays as a record, like the ephemeral peak.
      workingSetBytes: stats?.workingSetBytes ?? 0,
      liveInBytes: stats?.liveInBytes ?? 0,
      writtenFirstBytes: stats?.writtenFirstBytes ?? 0,
    },
    lane: job.laneId,
    gpu: job.gpuId,
    submittedAt: job.submittedAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    avgIterationMs: stats?.avgIterationMs ?? null,
    attainedMs: stats?.attainedMs ?? 0,
    queuedMs: stats?.queuedMs ?? 0,
    error: job.error,
    pid: job.pid,
    iterationSource: job.session?.iterationSource ?? job.iterationSource,
    gpuErrors: { count: job.gpuErrors.count, first: job.gpuErrors.first },
  };
}
