/**
 * E6 (issue 10): what MPS-style sharing would reserve for a set of jobs that are
 * resident together, Σ (P + E), beside what the service reserved for them, Σ P +
 * Σ lane sizes; and the same over time, for the memory figure.
 *
 * Over a whole run, from each job's own measured figures (`memoryOverRun`):
 * - P_j: the larger of its state between iterations, `memory.stateBytes` of `salus
 *   jobs --json` at the end (persistent bytes as its last iteration ended: exact, but
 *   only the last), and its largest sampled persistent bytes (a TF.js job holds its
 *   data set persistently until it disposes of it before its last step ends): both
 *   sides then count the same persistent allocations, ours through the samples;
 * - E_j: its `memory.ephemeralPeakBytes` (largest ephemeral bytes of one iteration);
 * - MPS-style = Σ_j (P_j + E_j): each job reserves its own peak, all at once;
 * - ours = the most the service actually held for them, max over the sampled
 *   memory map of Σ P + Σ lane sizes.
 * With one lane, ours ≈ Σ P + max E; with a lane per job (PACK) it is ≈ Σ (P + E).
 */
import { round } from '../stats.js';
import type { Sample } from '../sampler.js';
import type { Series } from '../figures.js';
import type { JobInfo } from '../../core/protocol/state.js';

/** A job's P and E as E6 counts them. */
export interface JobMemoryFigures {
  name: string;
  persistentBytes: number;
  ephemeralBytes: number;
  /** Where P came from: the job's measured state between iterations, or its sampled peak where that was larger. */
  persistentFrom: 'stateBytes' | 'sampled';
}

/** E6 over a run. */
export interface MemoryOverRun {
  mpsKiB: number;
  oursKiB: number;
  ratio: number;
  /** Σ P and the largest E, KiB: what one lane shared by all would need on top of Σ P. */
  sumPKiB: number;
  sumEKiB: number;
  maxEKiB: number;
  /** When ours peaked, and how many lanes the service held then and at most. */
  at: number;
  lanes: number;
  maxLanes: number;
  jobs: JobMemoryFigures[];
}

/** Each job's P (the larger of its stateBytes and its largest sampled persistent bytes) and E (its ephemeral peak). */
export function jobMemoryFigures(infos: readonly JobInfo[], samples: readonly Sample[]): JobMemoryFigures[] {
  return infos.map((info) => {
    const state = info.memory.stateBytes ?? 0;
    const sampled = Math.max(0, ...samples.flatMap((s) => s.jobs?.filter((j) => j.name === info.name).map((j) => j.persistentBytes) ?? []));
    return {
      name: info.name,
      persistentBytes: Math.max(state, sampled),
      ephemeralBytes: info.memory.ephemeralPeakBytes,
      persistentFrom: state >= sampled ? 'stateBytes' : 'sampled',
    };
  });
}

/** E6 over a run (see the header); null when no sample held memory. */
export function memoryOverRun(infos: readonly JobInfo[], samples: readonly Sample[]): MemoryOverRun | null {
  const held = samples.filter((s) => s.persistentBytes + s.laneBytes > 0);
  if (!held.length || !infos.length) return null;
  const peak = held.reduce((best, s) => (s.persistentBytes + s.laneBytes > best.persistentBytes + best.laneBytes ? s : best));
  const jobs = jobMemoryFigures(infos, samples);
  const sumP = jobs.reduce((sum, j) => sum + j.persistentBytes, 0);
  const sumE = jobs.reduce((sum, j) => sum + j.ephemeralBytes, 0);
  const ours = peak.persistentBytes + peak.laneBytes;
  const kib = (bytes: number) => round(bytes / 1024, 1);
  return {
    mpsKiB: kib(sumP + sumE), oursKiB: kib(ours), ratio: round((sumP + sumE) / ours, 2),
    sumPKiB: kib(sumP), sumEKiB: kib(sumE), maxEKiB: kib(Math.max(...jobs.map((j) => j.ephemeralBytes))),
    at: peak.at, lanes: peak.lanes, maxLanes: Math.max(...samples.map((s) => s.lanes)), jobs,
  };
}

/** The definition, for a summary row's `what` and the docs. */
export const E6_DEFINITION = 'Σ_j(P_j+E_j) (MPS-style: P_j = max(the job\'s stateBytes at the end, its sampled persistent peak), E_j = its ephemeral peak) / the most ΣP + Σ lanes the service held over the run (sampled)';

/** E6 at the sample where MPS-style sharing would need the most; null without a sample holding memory. */
export function memoryRatio(samples: readonly Sample[]): { mpsKiB: number; oursKiB: number; ratio: number; at: number; lanes: number } | null {
  const held = samples.filter((s) => s.persistentBytes + s.laneBytes > 0 && s.mpsBytes > 0);
  if (!held.length) return null;
  const peak = held.reduce((best, s) => (s.mpsBytes > best.mpsBytes ? s : best));
  const ours = peak.persistentBytes + peak.laneBytes;
  return { mpsKiB: round(peak.mpsBytes / 1024, 1), oursKiB: round(ours / 1024, 1), ratio: round(peak.mpsBytes / ours, 2), at: peak.at, lanes: peak.lanes };
}

/** Lines for the memory figure, in KiB against seconds after `t0`; with `overRun`, E6's Σ(P_j+E_j) as a level line. */
export function memorySeries(samples: readonly Sample[], t0: number, overRun?: MemoryOverRun | null): Series[] {
  const at = (s: Sample) => round((s.at - t0) / 1000, 2);
  const level = overRun && samples.length ? [{
    label: 'Σ(P_j+E_j) over the run (E6)', points: [[at(samples[0]), overRun.mpsKiB] as const, [at(samples[samples.length - 1]), overRun.mpsKiB] as const],
  }] : [];
  return [
    ...level,
    { label: 'Σ(P+E), MPS-style', points: samples.map((s) => [at(s), s.mpsBytes / 1024] as const) },
    { label: 'ΣP + Σ lanes (ours)', points: samples.map((s) => [at(s), (s.persistentBytes + s.laneBytes) / 1024] as const) },
    { label: 'ΣP', points: samples.map((s) => [at(s), s.persistentBytes / 1024] as const) },
  ];
}
