/**
 * `/metrics`: the service in Prometheus's text format, through prom-client.
 * Names follow Prometheus's conventions (base units in the name, `_total` on
 * counters, `_ratio` for 0..1) and read like the GPU exporters people already
 * graph (DCGM's `DCGM_FI_DEV_FB_USED`/`_FREE`, nvitop's
 * `nvitop_gpu_memory_used`/`_free`/`_total`): GPU series carry `gpu` (the GPU's
 * position, `0`, `1`, …, as DCGM numbers them), per-job series `job`, `name`,
 * `lane` (`none` while queued or ended), `state` and `gpu` (`none` while
 * queued), per-lane series `lane` and `gpu`. Values are read from the service when
 * scraped; iteration times and lane switches are counted as they happen.
 *
 * Prometheus puts its own `job` label (the scrape job) on every series, so
 * scrape with `honor_labels: true` to keep ours (else it becomes `exported_job`).
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { GpuMemoryMap, JobInfo, LaneInfo, ServiceSnapshot } from '../protocol/state.js';
import type { SalusService } from '../service/service.js';
import { IterationHistogram } from './iterationHistogram.js';

/** The labels of every per-job series. */
export const JOB_LABELS = ['job', 'name', 'lane', 'state', 'gpu'] as const;
const JOB_STATES = ['queued', 'running', 'paused', 'done', 'failed', 'killed'] as const;

/** A service's metrics; `text()` is the body of `/metrics`. */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** The exposition's content type (`text/plain; version=0.0.4; charset=utf-8`). */
  readonly contentType: string;
  text(): Promise<string>;
  /** Stops counting (the service's listeners are removed). */
  dispose(): void;
}

function jobLabels(job: JobInfo): Record<(typeof JOB_LABELS)[number], string> {
  return { job: job.id, name: job.name, lane: job.lane ?? 'none', state: job.state, gpu: gpuLabel(job.gpu) };
}

/** A GPU id (`gpu1`) as the `gpu` label says it (`1`); `none` for no GPU. */
export function gpuLabel(id: string | null | undefined): string {
  return id ? id.replace(/^gpu/, '') : 'none';
}

/** The service's snapshot without the jobs of its earlier runs (its history): they are not this process's to count. */
function thisRunSnapshot(service: SalusService): ServiceSnapshot {
  const snapshot = service.snapshot();
  return { ...snapshot, jobs: snapshot.jobs.filter((job) => !job.fromEarlierRun) };
}

/** Registers every series for `service` in a registry of its own, with Node's process metrics as `salus_process_*`/`salus_nodejs_*`. */
export function createServiceMetrics(service: SalusService): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'salus_' });
  // Read once per scrape (in `text`), so that every series of one scrape agrees.
  let snapshot = thisRunSnapshot(service);

  const gpuMaps = (): GpuMemoryMap[] => snapshot.memory.gpus ?? [{ ...snapshot.memory, id: 'gpu0', name: '' }];
  const gpu = (name: string, help: string, read: (map: GpuMemoryMap) => number) => new Gauge({
    name, help, labelNames: ['gpu'], registers: [registry],
    collect() {
      for (const map of gpuMaps()) this.set({ gpu: gpuLabel(map.id) }, read(map));
    },
  });
  new Gauge({
    name: 'salus_gpu_info', help: 'Each GPU the service shares (value 1): model, WebGPU backend, and whether it is a software GPU.',
    labelNames: ['gpu', 'model_name', 'backend', 'software'], registers: [registry],
    collect() {
      this.reset();
      for (const [index, info] of (snapshot.gpus ?? [{ id: 'gpu0', ...snapshot.gpu }]).entries()) {
        const name = snapshot.memory.gpus?.[index]?.name || info.description || info.device;
        this.set({ gpu: gpuLabel(info.id), model_name: name, backend: info.backend, software: String(info.isSoftware) }, 1);
      }
    },
  });
  gpu('salus_gpu_memory_total_bytes', 'GPU memory the service may use on the GPU (its capacity).', (map) => map.capacityBytes);
  gpu('salus_gpu_memory_used_bytes', 'GPU memory counted against capacity: persistent memory of its jobs plus its lanes.', (map) => map.usedBytes);
  gpu('salus_gpu_memory_free_bytes', 'GPU memory left for new jobs and lanes on the GPU.', (map) => map.freeBytes);
  gpu('salus_gpu_busy_ratio', 'Share of the last second during which some lane of the GPU ran an iteration, 0..1.',
    (map) => snapshot.busyShareByGpu?.[map.id] ?? snapshot.busyShare);
  gpu('salus_gpu_pipelines_kept', "Compiled pipelines of ended jobs kept for later jobs on the GPU (in the service's memory, not the GPU's).",
    (map) => map.keptPipelines?.count ?? 0);
  new Counter({
    name: 'salus_gpu_pipelines_reused_total', help: 'Kept pipelines handed to later jobs on the GPU instead of compiling.',
    labelNames: ['gpu'], registers: [registry],
    collect() {
      this.reset();
      for (const map of gpuMaps()) this.inc({ gpu: gpuLabel(map.id) }, map.keptPipelines?.reused ?? 0);
    },
  });

  new Gauge({
    name: 'salus_jobs', help: 'Jobs the service knows, by state (ended jobs are kept for a while).', labelNames: ['state'], registers: [registry],
    collect() {
      for (const state of JOB_STATES) this.set({ state }, snapshot.jobs.filter((job) => job.state === state).length);
    },
  });

  const perJob = (name: string, help: string, read: (job: JobInfo) => number) => new Gauge({
    name, help, labelNames: [...JOB_LABELS], registers: [registry],
    collect() {
      // A job's labels change (lane, state): drop the old series rather than keep them forever.
      this.reset();
      for (const job of snapshot.jobs) this.set(jobLabels(job), read(job));
    },
  });
  perJob('salus_job_memory_persistent_bytes', 'Persistent memory the job holds (weights, optimizer state), exact to the ledger.', (job) => job.memory.persistentBytes);
  perJob('salus_job_memory_ephemeral_peak_bytes', 'Largest ephemeral memory one iteration of the job used (or declared, before any ran).', (job) => job.memory.ephemeralPeakBytes);
  perJob('salus_job_memory_resident_bytes', 'Real GPU buffers the job holds now, persistent and ephemeral.', 
    // Measured by the memory manager where it reports it; a job holds at least its persistent buffers.
    (job) => (job.memory as Partial<{ residentBytes: number }>).residentBytes ?? job.memory.persistentBytes);
  perJob('salus_job_memory_paged_out_bytes', "Bytes of the job's buffers kept in host memory instead of on the GPU.", (job) => job.memory.pagedOutBytes ?? 0);
  perJob('salus_job_memory_state_bytes', 'Persistent bytes the job held as its last iteration ended: its state between iterations, as measured.', (job) => job.memory.stateBytes ?? 0);
  perJob('salus_job_memory_working_set_bytes', "Bytes of the job's buffers its last finished iteration touched.", (job) => job.memory.workingSetBytes ?? 0);
  perJob('salus_job_memory_live_in_bytes', 'Of those, buffers it read before writing: what must survive between its iterations.', (job) => job.memory.liveInBytes ?? 0);
  // Counters set from the service's own totals, which only grow.
  const counterFromTotal = (name: string, help: string, read: (job: JobInfo) => number) => new Counter({
    name, help, labelNames: [...JOB_LABELS], registers: [registry],
    collect() {
      this.reset();
      for (const job of snapshot.jobs) this.inc(jobLabels(job), read(job));
    },
  });
  counterFromTotal('salus_job_iterations_total', 'Iterations the job finished.', (job) => job.iterations.done);
  counterFromTotal('salus_job_queued_seconds_total', 'Time the job waited for a lane grant.', (job) => job.queuedMs / 1000);
  counterFromTotal('salus_job_gpu_seconds_total', "GPU time granted to the job's iterations.", (job) => job.attainedMs / 1000);

  const histogram = new IterationHistogram(() => new Map(snapshot.jobs.map((job) => [job.id, jobLabels(job)])));
  registry.registerMetric(histogram.asMetric());

  const lane = (name: string, help: string, read: (lane: LaneInfo) => number) => new Gauge({
    name, help, labelNames: ['lane', 'gpu'], registers: [registry],
    collect() {
      this.reset();
      for (const map of gpuMaps()) for (const entry of map.lanes) this.set({ lane: entry.id, gpu: gpuLabel(map.id) }, read(entry));
    },
  });
  lane('salus_lane_size_bytes', 'Ephemeral memory the lane reserves (counted against capacity).', (entry) => entry.sizeBytes);
  lane('salus_lane_pooled_bytes', "Real GPU buffers in the lane's pool, lent or idle.", (entry) => entry.pooledBytes);
  lane('salus_lane_jobs', 'Jobs admitted to the lane.', (entry) => entry.jobs.length);

  const switches = new Counter({
    name: 'salus_scheduler_switches_total', help: "Iterations granted in a lane to another job than the lane's previous one.",
    labelNames: ['lane'], registers: [registry],
  });
  const lastJobOfLane = new Map<string, string>();
  const stopListening = service.onDidSchedule(({ change }) => {
    if (change.type === 'finish') histogram.observe(change.jobId, change.gpuMs / 1000);
    if (change.type === 'grant') {
      const previous = lastJobOfLane.get(change.laneId);
      if (previous !== undefined && previous !== change.jobId) switches.inc({ lane: change.laneId });
      lastJobOfLane.set(change.laneId, change.jobId);
    }
  });

  return {
    registry,
    contentType: registry.contentType,
    text: () => {
      snapshot = thisRunSnapshot(service);
      return registry.metrics();
    },
    dispose: () => {
      stopListening();
      registry.clear();
    },
  };
}
