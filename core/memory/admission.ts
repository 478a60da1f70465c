/**
 * Salus's admission, as a pure function over plain numbers (SALUS-NOTES, "Admission
 * and lanes"). A set of jobs fits when Σ reservedPersistent(job) + Σ lane sizes ≤
 * capacity. A lane holds only ephemeral memory; persistent memory is per job.
 */
import { formatBytes } from '../platform/size.js';

/** What admission needs to know about one lane. */
export interface LaneView {
  id: string;
  sizeBytes: number;
  /** The smallest size it could shrink to now: its jobs' ephemeral need, and no less than the bytes lent out. */
  minSizeBytes: number;
}

/** Everything a decision depends on. */
export interface AdmissionInput {
  capacityBytes: number;
  capacitySource: string;
  /** Σ reservedPersistent(job) + Σ lane sizes of the jobs and lanes already admitted. */
  committedBytes: number;
  /** Existing lanes in creation order (ties go to the earlier one). */
  lanes: LaneView[];
  maxLanes: number;
  /** The new job's declared persistent bytes (unpadded). */
  persistentBytes: number;
  /** The new job's declared ephemeral peak (unpadded). */
  ephemeralBytes: number;
}

/** A lane's new size, part of a plan. */
export interface LaneResize {
  laneId: string;
  sizeBytes: number;
}

/**
 * The decision. `resizes` are applied first (shrinks evict idle pool buffers, a
 * join's growth reserves bytes), then the lane is created or joined.
 */
export type AdmissionPlan =
  | { kind: 'new-lane'; laneSizeBytes: number; resizes: LaneResize[] }
  | { kind: 'join'; laneId: string; resizes: LaneResize[] }
  | { kind: 'wait'; reason: string; missingBytes: number }
  | { kind: 'refused'; reason: string };

/** Salus's padding of declared persistent bytes: 1.1 × P, in whole bytes. */
export function paddedPersistentBytes(persistentBytes: number): number {
  return persistentBytes + Math.ceil(persistentBytes / 10);
}

/** Padding of a new lane: 1.05 × E, in whole bytes. */
export function paddedLaneBytes(ephemeralBytes: number): number {
  return ephemeralBytes + Math.ceil(ephemeralBytes / 20);
}

/** Checks declared hints; returns what is wrong, or null when both are absent or whole non-negative byte counts. */
export function invalidHints(hints: { persistentBytes?: number; ephemeralBytes?: number }): string | null {
  for (const key of ['persistentBytes', 'ephemeralBytes'] as const) {
    const value = hints[key];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0)) {
      return `invalid memory hint ${key}=${String(value)}: expected a whole number of bytes, 0 or more`;
    }
  }
  return null;
}

interface Option {
  laneId: string | null; // null: a new lane
  growthBytes: number;
  deficitBytes: number;
  /** Per lane, how far it may shrink for this option. */
  floors: Map<string, number>;
}

function slackBytes(lanes: LaneView[], floors: Map<string, number>): number {
  return lanes.reduce((sum, lane) => sum + Math.max(0, lane.sizeBytes - (floors.get(lane.id) ?? lane.sizeBytes)), 0);
}

/**
 * Shrinks lanes most slack first (slack: size above `floorOf(lane)`), each only as
 * far as still needed, until `bytes` are freed or no lane has slack. Admission
 * plans with it; the memory manager reclaims with it when a lane must grow.
 */
export function shrinkMostSlackFirst(lanes: readonly LaneView[], bytes: number, floorOf: (lane: LaneView) => number): LaneResize[] {
  let remaining = bytes;
  const bySlack = lanes
    .map((lane) => ({ lane, slack: Math.max(0, lane.sizeBytes - floorOf(lane)) }))
    .sort((a, b) => b.slack - a.slack);
  const resizes: LaneResize[] = [];
  for (const { lane, slack } of bySlack) {
    if (remaining <= 0 || slack <= 0) break;
    const shrink = Math.min(slack, remaining);
    remaining -= shrink;
    resizes.push({ laneId: lane.id, sizeBytes: lane.sizeBytes - shrink });
  }
  return resizes;
}

/** Shrinks lanes, most slack first, until the option's deficit is freed. */
function shrinkFor(lanes: LaneView[], option: Option): LaneResize[] {
  // A joined lane that must grow has no slack (its floor is at least E), so only plain shrinks land here.
  return shrinkMostSlackFirst(lanes, option.deficitBytes, (lane) => option.floors.get(lane.id) ?? lane.sizeBytes);
}

function joinResizes(option: Option, lanes: LaneView[], shrinks: LaneResize[]): LaneResize[] {
  const joined = lanes.find((lane) => lane.id === option.laneId)!;
  if (option.growthBytes > 0 && !shrinks.some((r) => r.laneId === joined.id)) {
    return [...shrinks, { laneId: joined.id, sizeBytes: joined.sizeBytes + option.growthBytes }];
  }
  return shrinks;
}

/**
 * Decides where a job goes, in this order:
 * refused when 1.1·P + E > capacity (it could never fit);
 * a new lane of 1.05·E (or E when the padding does not fit) while lanes < maxLanes and it fits;
 * joining the lane that needs the least growth to max(size, E) (ties: smallest, then oldest);
 * the same two, in the same order, if shrinking lanes toward minSizeBytes would make room;
 * the plan then shrinks lanes most slack first and only as far as that option needs;
 * else wait, naming the bytes still missing.
 */
export function planAdmission(input: AdmissionInput): AdmissionPlan {
  const { capacityBytes, lanes } = input;
  const persistent = paddedPersistentBytes(input.persistentBytes);
  const ephemeral = input.ephemeralBytes;
  const needs = `${formatBytes(persistent + ephemeral)} (${formatBytes(persistent)} persistent, the declared ${formatBytes(input.persistentBytes)} + 10%, + ${formatBytes(ephemeral)} ephemeral)`;
  if (persistent + ephemeral > capacityBytes) {
    return {
      kind: 'refused',
      reason: `job needs ${needs} but the GPU has ${formatBytes(capacityBytes)} (${input.capacitySource}), so it can never fit; lower the batch size or pass a larger --memory`,
    };
  }
  const availableBytes = capacityBytes - input.committedBytes;
  const minFloors = new Map(lanes.map((lane) => [lane.id, lane.minSizeBytes]));
  const options: Option[] = [];
  if (lanes.length < Math.max(1, Math.floor(input.maxLanes) || 1)) {
    options.push({ laneId: null, growthBytes: 0, deficitBytes: persistent + ephemeral - availableBytes, floors: minFloors });
  }
  const joins = [...lanes]
    .sort((a, b) => Math.max(0, ephemeral - a.sizeBytes) - Math.max(0, ephemeral - b.sizeBytes) || a.sizeBytes - b.sizeBytes)
    .map((lane): Option => {
      const growthBytes = Math.max(0, ephemeral - lane.sizeBytes);
      const floors = new Map(minFloors).set(lane.id, Math.max(lane.minSizeBytes, ephemeral));
      return { laneId: lane.id, growthBytes, deficitBytes: persistent + growthBytes - availableBytes, floors };
    });
  options.push(...joins); // Array.sort is stable: equal lanes keep creation order.

  const fitting = options.find((option) => option.deficitBytes <= 0);
  if (fitting && fitting.laneId === null) {
    const padded = paddedLaneBytes(ephemeral);
    return { kind: 'new-lane', laneSizeBytes: persistent + padded <= availableBytes ? padded : ephemeral, resizes: [] };
  }
  if (fitting) return { kind: 'join', laneId: fitting.laneId!, resizes: joinResizes(fitting, lanes, []) };

  // Lanes are resized when the queue would otherwise wait: the first option, in the
  // order above, that fits once lanes give up their slack.
  const shortBytes = options.map((option) => option.deficitBytes - slackBytes(lanes, option.floors));
  const best = options.find((_, index) => shortBytes[index] <= 0);
  const missingBytes = Math.min(...shortBytes);
  if (best) {
    const shrinks = shrinkFor(lanes, best);
    if (best.laneId === null) return { kind: 'new-lane', laneSizeBytes: ephemeral, resizes: shrinks };
    return { kind: 'join', laneId: best.laneId, resizes: joinResizes(best, lanes, shrinks) };
  }
  return {
    kind: 'wait',
    missingBytes,
    reason: `waiting for GPU memory: job needs ${needs}; ${formatBytes(missingBytes)} (${missingBytes} bytes) more must be freed first (${formatBytes(Math.max(0, availableBytes))} of ${formatBytes(capacityBytes)} unreserved)`,
  };
}
