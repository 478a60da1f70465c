/**
 * A realistic service state for screenshots, the dev server (`?demo`) and
 * tests: ten jobs in every state, two lanes, a software GPU, the PACK policy.
 * Memory numbers obey the ledger's invariant
 * (usedBytes = Σ persistent + Σ lane sizes; freeBytes = capacity − used).
 */
import type { JobInfo, JobState, PolicyInfo, PolicyKnob, PolicyName, ServiceSnapshot } from '../../../core/protocol/state.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Knobs per policy, as a scheduler might describe them. */
export const DEMO_KNOBS: Record<PolicyName, PolicyKnob[]> = {
  FIFO: [
    { key: 'maxLanes', description: 'Most lanes open at once; each runs one iteration at a time.', kind: 'number', min: 1, max: 8, step: 1, unit: 'lanes' },
  ],
  SRTF: [
    { key: 'maxLanes', description: 'Most lanes open at once; each runs one iteration at a time.', kind: 'number', min: 1, max: 8, step: 1, unit: 'lanes' },
    { key: 'starvationMs', description: 'A job waiting longer than this runs next, however long it has left.', kind: 'number', min: 0, max: 60_000, step: 500, unit: 'ms' },
  ],
  PACK: [
    { key: 'maxLanes', description: 'Most lanes open at once; more lanes run side by side but reserve more memory.', kind: 'number', min: 1, max: 8, step: 1, unit: 'lanes' },
    { key: 'laneGrowthPercent', description: 'How much a lane may grow to take in a job before a new lane opens.', kind: 'number', min: 0, max: 200, step: 5, unit: '%' },
    { key: 'preferFullLanes', description: 'Place new jobs in the fullest lane that fits, not the emptiest.', kind: 'boolean' },
  ],
  FAIR: [
    { key: 'maxLanes', description: 'Most lanes open at once; each runs one iteration at a time.', kind: 'number', min: 1, max: 8, step: 1, unit: 'lanes' },
    { key: 'quantumMs', description: 'GPU time a job may use in a row before the others get their turn.', kind: 'number', min: 10, max: 2000, step: 10, unit: 'ms' },
  ],
  PRIORITY: [
    { key: 'maxLanes', description: 'Most lanes open at once; each runs one iteration at a time.', kind: 'number', min: 1, max: 8, step: 1, unit: 'lanes' },
    { key: 'agingPerMinute', description: 'Priority a waiting job gains per minute, so low priorities still run.', kind: 'number', min: 0, max: 10, step: 0.5, unit: '/min' },
    { key: 'preempt', description: 'Give a lane to a higher-priority job at the next iteration boundary.', kind: 'boolean' },
  ],
};

/** Default knob values per policy. */
export const DEMO_PARAMS: Record<PolicyName, Record<string, number | boolean>> = {
  FIFO: { maxLanes: 2 },
  SRTF: { maxLanes: 2, starvationMs: 15_000 },
  PACK: { maxLanes: 2, laneGrowthPercent: 25, preferFullLanes: true },
  FAIR: { maxLanes: 2, quantumMs: 200 },
  PRIORITY: { maxLanes: 2, agingPerMinute: 1, preempt: false },
};

/** The demo policy `name` with its default knobs. */
export function demoPolicy(name: PolicyName): PolicyInfo {
  return { name, params: { ...DEMO_PARAMS[name] }, knobs: DEMO_KNOBS[name] };
}

interface JobSpec {
  id: string;
  name: string;
  state: JobState;
  priority: number;
  done: number;
  total: number | null;
  avgMs: number | null;
  persistent: number;
  ephemeral: number;
  lane: string | null;
  ageMin: number;
  error?: string;
}

const SPECS: JobSpec[] = [
  { id: 'a3f9c2', name: 'resnet50-imagenet', state: 'running', priority: 2, done: 4210, total: 10_000, avgMs: 182.4, persistent: Math.round(1.6 * GiB), ephemeral: Math.round(3.2 * GiB), lane: 'lane-0', ageMin: 42 },
  { id: '5be017', name: 'bert-base-squad', state: 'running', priority: 1, done: 1830, total: 5000, avgMs: 241.7, persistent: Math.round(2.1 * GiB), ephemeral: Math.round(3.9 * GiB), lane: 'lane-1', ageMin: 38 },
  { id: '0c44d8', name: 'mnist-mlp-sweep-07', state: 'running', priority: 0, done: 8702, total: 12_000, avgMs: 4.1, persistent: 12 * MiB, ephemeral: 48 * MiB, lane: 'lane-0', ageMin: 31 },
  { id: 'e91a6f', name: 'gpt2-small-serve', state: 'running', priority: 3, done: 15_233, total: null, avgMs: 38.9, persistent: 622 * MiB, ephemeral: Math.round(1.1 * GiB), lane: 'lane-1', ageMin: 27 },
  { id: '7d2b90', name: 'espcn-superres', state: 'paused', priority: 0, done: 2200, total: 6000, avgMs: 22.5, persistent: 96 * MiB, ephemeral: 512 * MiB, lane: 'lane-0', ageMin: 24 },
  { id: 'f1806e', name: 'whisper-tiny-batch', state: 'running', priority: 0, done: 120, total: 800, avgMs: 412, persistent: 290 * MiB, ephemeral: 780 * MiB, lane: 'lane-1', ageMin: 12 },
  { id: '29ce5a', name: 'vgg16-cifar100', state: 'queued', priority: 0, done: 0, total: 20_000, avgMs: null, persistent: 0, ephemeral: Math.round(5.5 * GiB), lane: null, ageMin: 9 },
  { id: 'b6730d', name: 'lstm-ptb', state: 'done', priority: 0, done: 3900, total: 3900, avgMs: 61.2, persistent: 0, ephemeral: 900 * MiB, lane: null, ageMin: 58 },
  {
    id: '8e15f4', name: 'resnet18-cifar10', state: 'failed', priority: 1, done: 57, total: 4000, avgMs: 95.3, persistent: 0, ephemeral: 640 * MiB, lane: null, ageMin: 19,
    error: 'GPUValidationError: Binding size (4194304) of [Buffer "conv2.activations"] is smaller than the minimum binding size (8388608).\n'
      + ' - While validating entries[1] as a Buffer.\n'
      + ' - While validating [BindGroupDescriptor "conv2.bind"] against [BindGroupLayout "conv2.layout"].\n'
      + ' - While calling [Device].CreateBindGroup([BindGroupDescriptor "conv2.bind"]).',
  },
  { id: 'c0ffee', name: 'unet-carvana', state: 'killed', priority: 0, done: 410, total: 3000, avgMs: 133.8, persistent: 0, ephemeral: Math.round(2.4 * GiB), lane: null, ageMin: 50 },
];

/** Which job's iteration runs in each lane now. */
const RUNNING_NOW: Record<string, string> = { 'lane-0': 'a3f9c2', 'lane-1': '5be017' };

function toJob(spec: JobSpec, now: number): JobInfo {
  const submittedAt = now - spec.ageMin * 60_000;
  const final = spec.state === 'done' || spec.state === 'failed' || spec.state === 'killed';
  const startedAt = spec.state === 'queued' ? null : submittedAt + 4_000;
  const attainedMs = spec.avgMs === null ? 0 : Math.round(spec.done * spec.avgMs);
  return {
    id: spec.id,
    name: spec.name,
    state: spec.state,
    priority: spec.priority,
    iterations: { done: spec.done, total: spec.total },
    memory: { persistentBytes: spec.persistent, ephemeralPeakBytes: spec.ephemeral },
    lane: spec.lane,
    submittedAt,
    startedAt,
    finishedAt: final && startedAt !== null ? startedAt + attainedMs * 1.6 : null,
    avgIterationMs: spec.avgMs,
    attainedMs,
    queuedMs: spec.state === 'queued' ? now - submittedAt : Math.round(attainedMs * 0.55) + 4_000,
    error: spec.error ?? null,
    pid: spec.state === 'queued' || final ? null : 40_000 + parseInt(spec.id.slice(0, 3), 16) % 9000,
    iterationSource: spec.total === null ? 'inferred' : 'sdk',
  };
}

/** The demo snapshot as of `now` (epoch ms). Each call returns fresh objects. */
export function demoSnapshot(now = Date.now()): ServiceSnapshot {
  const jobs = SPECS.map((spec) => toJob(spec, now));
  const admitted = jobs.filter((job) => job.lane !== null);
  const lanes = Object.entries(RUNNING_NOW).map(([id, running]) => {
    const members = admitted.filter((job) => job.lane === id);
    const sizeBytes = Math.max(...members.map((job) => job.memory.ephemeralPeakBytes));
    // lane-0's pool has not yet grown to its full reservation.
    const pooledBytes = id === 'lane-0' ? sizeBytes - 460 * MiB : sizeBytes;
    return { id, sizeBytes, pooledBytes, jobs: members.map((job) => job.id), running };
  });
  const capacityBytes = 16 * GiB;
  const usedBytes = admitted.reduce((sum, job) => sum + job.memory.persistentBytes, 0)
    + lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
  return {
    version: '0.1.0',
    gpu: {
      vendor: 'google',
      architecture: 'swiftshader',
      device: 'SwiftShader Device (Subzero)',
      description: 'SwiftShader Device (Subzero) (0x0000C0DE)',
      backend: 'vulkan',
      isSoftware: true,
      features: ['timestamp-query', 'shader-f16', 'float32-filterable'],
    },
    jobs,
    memory: {
      capacityBytes,
      usedBytes,
      freeBytes: capacityBytes - usedBytes,
      capacitySource: '--memory',
      jobs: admitted.map((job) => ({ id: job.id, persistentBytes: job.memory.persistentBytes })),
      lanes,
    },
    policy: demoPolicy('PACK'),
    busyShare: 0.93,
    at: now,
  };
}
