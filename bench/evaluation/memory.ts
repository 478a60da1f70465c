/**
 * E6 (issue 10) from the service's memory map, sampled while an experiment runs:
 * what MPS-style sharing would reserve for the admitted jobs, Σ (P + E), beside
 * what the service reserves, Σ P + Σ lane sizes; and the same over time, for the
 * memory figure.
 */
import { round, type Sample } from '../paper/common.js';
import type { Series } from '../figures.js';

/** E6 at the sample where MPS-style sharing would need the most; null without a sample holding memory. */
export function memoryRatio(samples: readonly Sample[]): { mpsKiB: number; oursKiB: number; ratio: number; at: number; lanes: number } | null {
  const held = samples.filter((s) => s.persistentBytes + s.laneBytes > 0 && s.mpsBytes > 0);
  if (!held.length) return null;
  const peak = held.reduce((best, s) => (s.mpsBytes > best.mpsBytes ? s : best));
  const ours = peak.persistentBytes + peak.laneBytes;
  return { mpsKiB: round(peak.mpsBytes / 1024, 1), oursKiB: round(ours / 1024, 1), ratio: round(peak.mpsBytes / ours, 2), at: peak.at, lanes: peak.lanes };
}

/** Lines for the memory figure, in KiB against seconds after `t0`. */
export function memorySeries(samples: readonly Sample[], t0: number): Series[] {
  const at = (s: Sample) => round((s.at - t0) / 1000, 2);
  return [
    { label: 'Σ(P+E), MPS-style', points: samples.map((s) => [at(s), s.mpsBytes / 1024] as const) },
    { label: 'ΣP + Σ lanes (ours)', points: samples.map((s) => [at(s), (s.persistentBytes + s.laneBytes) / 1024] as const) },
    { label: 'ΣP', points: samples.map((s) => [at(s), s.persistentBytes / 1024] as const) },
  ];
}
