/**
 * What the three paper experiments share: the shape of a result, a seeded random
 * source, small statistics, a sampler of the service's state while an experiment
 * runs, and where the job scripts live. The service and `salus run` processes
 * come from bench/harness.ts (the compiled CLI in dist/, as users run it).
 */
import { join } from 'node:path';
import { ROOT, type BenchService } from '../harness.js';
import { quantile, round } from '../stats.js';
import type { GpuInfo, JobInfo, ServiceSnapshot } from '../../core/protocol/state.js';

/** The paper bench's job scripts (plain ES modules, not compiled). */
export const PAPER_JOBS_DIR = join(ROOT, 'bench', 'paper', 'jobs');

export const KiB = 1024;
export const MiB = 1024 * KiB;

/** One experiment's outcome: lines for the readable summary, the headline figures, everything measured. */
export interface PaperResult {
  name: string;
  /** How it was measured and how it differs from the paper (goes into the JSON file). */
  method: string;
  /** Key figures, for the JSON file and a final table. */
  headline: Record<string, number | string | boolean | null>;
  /** The readable summary, one line each. */
  summary: string[];
  /** The GPU the experiment's service opened. */
  gpu: GpuInfo | null;
  data: Record<string, unknown>;
}

/** A seeded pseudo-random source in [0, 1) (mulberry32): the same seed gives the same trace. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates with a seeded source; returns a new array. */
export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** An exponential draw with the given mean (Poisson arrivals have exponential gaps). */
export function exponential(mean: number, random: () => number): number {
  return -mean * Math.log(1 - random());
}

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : NaN;
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

export function p95(values: readonly number[]): number {
  return quantile(values, 0.95);
}

export { quantile, round };

/** `a / b` rounded, or null when it means nothing. */
export function ratio(a: number, b: number, digits = 2): number | null {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b, digits) : null;
}

/** Seconds from milliseconds, for the summary. */
export function secs(ms: number, digits = 2): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(digits)} s` : 'n/a';
}

export function msText(ms: number, digits = 1): string {
  return Number.isFinite(ms) ? `${ms.toFixed(digits)} ms` : 'n/a';
}

export function times(value: number | null): string {
  return value === null ? 'n/a' : `${value.toFixed(2)}×`;
}

export function bytesText(bytes: number): string {
  if (bytes >= MiB) return `${(bytes / MiB).toFixed(2)} MiB`;
  if (bytes >= KiB) return `${(bytes / KiB).toFixed(1)} KiB`;
  return `${bytes} B`;
}

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

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Polls `check` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | null>, timeoutMs: number, what: string, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`bench paper: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The last JSON line of a job's stdout with `key` set. */
export function lastLine(lines: readonly { json: Record<string, any> | null }[], key: string): Record<string, any> | null {
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i].json && key in lines[i].json!) return lines[i].json;
  return null;
}
