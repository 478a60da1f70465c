/**
 * A simulated `SalusApi` over `demoSnapshot`, for the dev server (`?demo`) and
 * screenshots: lanes take turns running their jobs' iterations, metrics stream
 * with a minute of history already behind them, and every command works
 * (kill frees memory, launch queues a job). Not a model of the real scheduler.
 */
import type { ConnectionState, LaunchRequest, SalusApi, ServiceEvent } from '../../../core/protocol/api.js';
import type { JobInfo, PolicyName, ServiceSnapshot } from '../../../core/protocol/state.js';
import type { ClusterJob } from '../../../core/protocol/cluster.js';
import { demoPolicy, demoSnapshot } from './demoSnapshot.js';

/** How lively the simulation is. */
export interface DemoApiOptions {
  /** Milliseconds between simulated updates; 0 stops the clock (static screenshots). */
  tickMs?: number;
  /** Seconds of metrics history sent to each new subscriber. */
  historySeconds?: number;
}

/** A `SalusApi` that needs no service. */
export function createDemoApi(options: DemoApiOptions = {}): SalusApi {
  const tickMs = options.tickMs ?? 500;
  const historySeconds = options.historySeconds ?? 60;
  const snap: ServiceSnapshot = demoSnapshot();
  const listeners = new Set<(event: ServiceEvent) => void>();
  const outputs = new Map<string, string>();
  let seed = 7;
  let laneWaiters = 2;
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);

  const emit = (event: ServiceEvent) => listeners.forEach((listener) => listener(event));
  const job = (id: string) => {
    const found = snap.jobs.find((candidate) => candidate.id === id);
    if (!found) throw new Error(`No job ${id}.`);
    return found;
  };

  function recomputeMemory(): void {
    const admitted = snap.jobs.filter((candidate) => candidate.lane !== null);
    for (const lane of snap.memory.lanes) {
      lane.jobs = admitted.filter((candidate) => candidate.lane === lane.id).map((candidate) => candidate.id);
      if (lane.running && !lane.jobs.includes(lane.running)) lane.running = lane.jobs[0] ?? null;
    }
    snap.memory.jobs = admitted.map((candidate) => ({ id: candidate.id, persistentBytes: candidate.memory.persistentBytes }));
    snap.memory.usedBytes = admitted.reduce((sum, candidate) => sum + candidate.memory.persistentBytes, 0)
      + snap.memory.lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
    snap.memory.freeBytes = snap.memory.capacityBytes - snap.memory.usedBytes;
  }

  function metricsAt(at: number): ServiceEvent {
    const rates: Record<string, number> = {};
    for (const lane of snap.memory.lanes) {
      const runnable = lane.jobs.map(job).filter((candidate) => candidate.state === 'running');
      for (const candidate of runnable) {
        const perSecond = 1000 / (candidate.avgIterationMs ?? 100) / runnable.length;
        rates[candidate.id] = Math.round(perSecond * (0.8 + 0.4 * random()) * 100) / 100;
      }
    }
    const waiting = snap.jobs.filter((candidate) => candidate.state === 'queued').length;
    // Jobs waiting for their lane drift slowly, as they do when lanes take turns.
    laneWaiters = Math.max(0, Math.min(4, laneWaiters + (random() < 0.15 ? (random() < 0.5 ? -1 : 1) : 0)));
    return { type: 'metrics', at, busyShare: 0.86 + 0.12 * random(), queueLength: waiting + laneWaiters, iterationsPerSecond: rates };
  }

  function tick(): void {
    for (const lane of snap.memory.lanes) {
      const runnable = lane.jobs.map(job).filter((candidate) => candidate.state === 'running');
      if (runnable.length === 0) continue;
      const next = runnable[(runnable.findIndex((candidate) => candidate.id === lane.running) + 1) % runnable.length];
      lane.running = next.id;
      for (const candidate of runnable) advance(candidate, tickMs / runnable.length);
    }
    snap.at = Date.now();
    emit({ type: 'jobs', jobs: structuredClone(snap.jobs) });
    emit({ type: 'memory', memory: structuredClone(snap.memory) });
    emit(metricsAt(snap.at));
  }

  function advance(candidate: JobInfo, grantedMs: number): void {
    const steps = Math.max(1, Math.round(grantedMs / (candidate.avgIterationMs ?? 100)));
    const { total } = candidate.iterations;
    candidate.iterations.done = total === null ? candidate.iterations.done + steps : Math.min(total, candidate.iterations.done + steps);
    candidate.attainedMs += grantedMs;
    const line = `[${candidate.name}] iteration ${candidate.iterations.done}: loss ${(2 / Math.log(candidate.iterations.done + 3)).toFixed(4)}\n`;
    outputs.set(candidate.id, (outputs.get(candidate.id) ?? '') + line);
    emit({ type: 'output', jobId: candidate.id, stream: 'stdout', text: line });
  }

  function end(candidate: JobInfo, state: 'killed' | 'done'): void {
    candidate.state = state;
    candidate.lane = null;
    candidate.memory.persistentBytes = 0;
    candidate.finishedAt = Date.now();
    candidate.pid = null;
    recomputeMemory();
  }

  if (tickMs > 0) setInterval(tick, tickMs);

  const changed = () => {
    emit({ type: 'jobs', jobs: structuredClone(snap.jobs) });
    emit({ type: 'memory', memory: structuredClone(snap.memory) });
  };

  const started = Date.now();
  const clusterJobs: ClusterJob[] = [
    { slurmJobId: '4101', name: 'resnet-sweep-1', user: 'demo', state: 'RUNNING', node: 'gpu-node1', partition: 'gpu', submittedAt: started - 600_000, startedAt: started - 540_000, finishedAt: null, exitCode: null, output: 'slurm-%j.out' },
    { slurmJobId: '4102', name: 'resnet-sweep-2', user: 'demo', state: 'RUNNING', node: 'gpu-node1', partition: 'gpu', submittedAt: started - 590_000, startedAt: started - 300_000, finishedAt: null, exitCode: null, output: 'slurm-%j.out' },
    { slurmJobId: '4103', name: 'bert-finetune', user: 'demo', state: 'PENDING', node: null, partition: 'gpu', submittedAt: started - 60_000, startedAt: null, finishedAt: null, exitCode: null, output: 'slurm-%j.out' },
  ];

  return {
    snapshot: async () => structuredClone(snap),
    subscribe(listener) {
      listeners.add(listener);
      // History first, as if the panel had been open for a while.
      const now = Date.now();
      queueMicrotask(() => {
        for (let s = historySeconds * 2; s > 0; s -= 1) listener(metricsAt(now - s * 500));
      });
      return () => listeners.delete(listener);
    },
    onConnection(listener: (state: ConnectionState) => void) {
      listener('open');
      return () => undefined;
    },
    async setPolicy(name: PolicyName, params) {
      snap.policy = { ...demoPolicy(name), ...(params ? { params: { ...demoPolicy(name).params, ...params } } : {}) };
      emit({ type: 'policy', policy: structuredClone(snap.policy) });
      return structuredClone(snap.policy);
    },
    async setPolicyParams(params) {
      snap.policy.params = { ...snap.policy.params, ...params };
      emit({ type: 'policy', policy: structuredClone(snap.policy) });
      return structuredClone(snap.policy);
    },
    async killJob(id) {
      end(job(id), 'killed');
      changed();
    },
    async pauseJob(id) {
      job(id).state = 'paused';
      changed();
    },
    async resumeJob(id) {
      job(id).state = 'running';
      changed();
    },
    async setPriority(id, priority) {
      job(id).priority = priority;
      changed();
    },
    async setShare(id, share) {
      job(id).share = share;
      changed();
    },
    async uploadJob(fileName) {
      return { file: `/home/demo/.local/share/salus/jobs/${fileName}` };
    },
    async launchJob(request: LaunchRequest) {
      const id = Math.floor(random() * 0xffffff).toString(16).padStart(6, '0');
      const name = request.name ?? request.file.replace(/^.*\//, '').replace(/\.m?js$/, '');
      snap.jobs.push({
        id, name, state: 'queued', priority: request.hints?.priority ?? 0,
        iterations: { done: 0, total: request.hints?.iterations ?? null },
        memory: { persistentBytes: 0, ephemeralPeakBytes: 0 }, lane: null,
        submittedAt: Date.now(), startedAt: null, finishedAt: null, avgIterationMs: null,
        attainedMs: 0, queuedMs: 0, error: null, pid: null, iterationSource: 'inferred',
      });
      changed();
      return { jobId: id };
    },
    async exampleJobs() {
      return [
        { name: 'wgsl-train', file: '/demo/assets/jobs/wgsl-train.js', description: 'a 2-layer MLP trained by plain SGD, written directly against WebGPU with WGSL compute shaders.' },
        { name: 'tfjs-train', file: '/demo/assets/jobs/tfjs-train.js', description: 'TensorFlow.js on its WebGPU backend, used as any TF.js user would (no flags, no patches).' },
      ];
    },
    async clusterJobs() {
      return { available: true as const, jobs: structuredClone(clusterJobs) };
    },
    async killClusterJob(id) {
      const found = clusterJobs.find((j) => j.slurmJobId === id);
      if (found) Object.assign(found, { state: 'CANCELLED', finishedAt: Date.now() });
    },
    async jobOutput(id) {
      const found = job(id);
      const header = `salus: job ${found.id} (${found.name}) on ${snap.gpu.device}\n`;
      return header + (outputs.get(id) ?? '') + (found.error ? `${found.error}\n` : '');
    },
  };
}
