/**
 * The memory map's geometry, computed from a `MemoryMap` alone: one segment per
 * admitted job's persistent bytes, one per lane, then free space. Kept apart
 * from the component so the arithmetic (which must match the ledger exactly)
 * is testable without a DOM.
 */
import type { JobInfo, MemoryMap } from '../../../core/protocol/state.js';
import { jobColor, jobInk } from '../colors.js';

/** What a stretch of the bar holds. */
export type SegmentKind = 'persistent' | 'lane' | 'free';

/** One stretch of the memory bar. */
export interface Segment {
  /** Stable key: `job:<id>`, `lane:<id>` or `free`. */
  key: string;
  kind: SegmentKind;
  label: string;
  bytes: number;
  /** Share of the bar, 0..1. */
  share: number;
  color: string | null;
  /** Text colour readable on `color`. */
  ink: string | null;
  /** For lanes: bytes of real buffers pooled now (≤ bytes). */
  pooledBytes?: number;
  /** For lanes: the job iterating in it now. */
  runningJobId?: string | null;
}

/**
 * Segments in bar order. Shares are of the capacity, or of used + free if the
 * service ever reports more than its capacity, so the bar never overflows.
 */
export function layoutMemory(memory: Omit<MemoryMap, 'gpus'>, jobsById: Record<string, JobInfo>): Segment[] {
  const scale = Math.max(memory.capacityBytes, memory.usedBytes + memory.freeBytes, 1);
  const segments: Segment[] = [];
  for (const entry of memory.jobs) {
    if (entry.persistentBytes <= 0) continue;
    segments.push({
      key: `job:${entry.id}`,
      kind: 'persistent',
      label: jobsById[entry.id]?.name ?? entry.id,
      bytes: entry.persistentBytes,
      share: entry.persistentBytes / scale,
      color: jobColor(entry.id),
      ink: jobInk(entry.id),
    });
  }
  for (const lane of memory.lanes) {
    segments.push({
      key: `lane:${lane.id}`,
      kind: 'lane',
      label: lane.id,
      bytes: lane.sizeBytes,
      share: lane.sizeBytes / scale,
      color: lane.running ? jobColor(lane.running) : null,
      ink: null,
      pooledBytes: lane.pooledBytes,
      runningJobId: lane.running,
    });
  }
  if (memory.freeBytes > 0) {
    segments.push({ key: 'free', kind: 'free', label: 'Free', bytes: memory.freeBytes, share: memory.freeBytes / scale, color: null, ink: null });
  }
  return segments;
}

/** Round tick positions for an axis from 0 to `maxBytes`: 4–8 steps of 1, 2 or 5 × a power of 1024's unit. */
export function axisTicks(maxBytes: number): number[] {
  if (maxBytes <= 0) return [0];
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(maxBytes) / Math.log(1024)));
  const inUnits = maxBytes / unit;
  const step = [0.25, 0.5, 1, 2, 4, 5, 10, 20, 25, 50, 100, 200, 250, 500].find((s) => inUnits / s <= 8) ?? 1000;
  const ticks: number[] = [];
  for (let value = 0; value <= inUnits + 1e-9; value += step) ticks.push(value * unit);
  return ticks;
}
