/**
 * What an experiment watches while it runs: a sampler of the service's state
 * (busy share, lanes, Σ P, Σ lanes and the MPS-style Σ (P + E) of the admitted
 * jobs) and the service's GPU and job table, read through the control
 * connection of bench/harness.ts's `BenchService`.
 */
import type { BenchService } from './harness.js';
import type { GpuInfo, JobInfo, ServiceSnapshot } from '../core/protocol/state.js';

/** One look at the service while an experiment runs. */
export interface Sample {
  at: number;
  busyShare: number;
  running: number;
  queued: number;
  lanes: number;
  usedBytes: number;
  /** Σ persistent bytes of the admitted jobs. */
  persistentBytes: number;
  /** Σ lane sizes: the ephemeral space Salus reserves. */
  laneBytes: number;
  /** What MPS-style sharing would reserve for the same admitted jobs: Σ (persistent + ephemeral peak). */
  mpsBytes: number;
  /** Each admitted job's persistent bytes and ephemeral peak at this sample. */
  jobs?: { name: string; persistentBytes: number; ephemeralPeakBytes: number }[];
}

/**
 * Samples `snapshot` about once a second until stopped. The service's busyShare is
 * the share of its last 1 s window in which some lane held an iteration (grant to
 * finish, so the job's own round trips inside an iteration count as busy): lane
 * occupancy, not SM occupancy.
 */
export function startSampler(service: BenchService, everyMs = 1000): { stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  let stopped = false;
  let pending: Promise<void> = Promise.resolve();
  const take = async () => {
    try {
      const snapshot = await service.call<ServiceSnapshot>('snapshot');
      const admitted = snapshot.jobs.filter((j) => j.lane !== null);
      samples.push({
        at: snapshot.at,
        busyShare: snapshot.busyShare,
        running: snapshot.jobs.filter((j) => j.state === 'running' || j.state === 'paused').length,
        queued: snapshot.jobs.filter((j) => j.state === 'queued').length,
        lanes: snapshot.memory.lanes.length,
        usedBytes: snapshot.memory.usedBytes,
        persistentBytes: snapshot.memory.jobs.reduce((sum, j) => sum + j.persistentBytes, 0),
        laneBytes: snapshot.memory.lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0),
        mpsBytes: admitted.reduce((sum, j) => sum + j.memory.persistentBytes + j.memory.ephemeralPeakBytes, 0),
        jobs: admitted.map((j) => ({ name: j.name, persistentBytes: j.memory.persistentBytes, ephemeralPeakBytes: j.memory.ephemeralPeakBytes })),
      });
    } catch {
      // The service is busy or stopping: skip this sample.
    }
  };
  const timer = setInterval(() => {
    if (!stopped) pending = pending.then(take);
  }, everyMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await pending;
      return samples;
    },
  };
}

/** The GPU the service opened. */
export async function gpuOf(service: BenchService): Promise<GpuInfo | null> {
  try {
    return (await service.call<ServiceSnapshot>('snapshot')).gpu;
  } catch {
    return null;
  }
}

/** `salus jobs` through the control connection. */
export function jobsOf(service: BenchService): Promise<JobInfo[]> {
  return service.call<JobInfo[]>('jobs');
}
