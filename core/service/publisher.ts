/**
 * What subscribers of the service hear (`ServiceEvent`s, for the panel, the
 * bridge and `salus` clients): changes coalesced to at most one event per part
 * per EVENT_INTERVAL_MS, a `metrics` sample every second, and job output as it
 * comes. Parts are read from the service when the event goes out, so a burst
 * of changes costs one read.
 */
import type { ServiceEvent } from '../protocol/api.js';
import type { JobInfo, MemoryMap, PolicyInfo } from '../protocol/state.js';
import { BusyMeter } from './busyMeter.js';
import { Emitter, type Event } from './events.js';

/** Events are coalesced to at most one of each kind per this many milliseconds. */
export const EVENT_INTERVAL_MS = 100;
/** How often a `metrics` event goes out. */
export const METRICS_INTERVAL_MS = 1000;

/** A part of the state that an event replaces. */
export type StatePart = 'jobs' | 'memory' | 'policy';

/** What the publisher reads when it sends. */
export interface PublishedState {
  jobInfos(): JobInfo[];
  memoryMap(): MemoryMap;
  policyInfo(): PolicyInfo;
  /** Iterations done so far by each job the scheduler knows. */
  iterationsDone(): Map<string, number>;
  /** Jobs waiting for admission. */
  queueLength(): number;
}

export class Publisher {
  private readonly emitter = new Emitter<ServiceEvent>();
  /** Every event the service publishes. */
  readonly onDidPublish: Event<ServiceEvent> = this.emitter.event;
  /** Lanes' busy time, sampled with each `metrics` event. */
  readonly busy = new BusyMeter();
  /** The same per GPU, by id. */
  private readonly busyByGpu = new Map<string, BusyMeter>();
  private readonly dirty = new Set<StatePart>();
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly metricsTimer: NodeJS.Timeout;
  private lastIterations = new Map<string, number>();

  constructor(private readonly state: PublishedState) {
    this.metricsTimer = setInterval(() => this.publishMetrics(), METRICS_INTERVAL_MS);
    this.metricsTimer.unref();
  }

  /** Marks part of the state changed; subscribers hear of it within EVENT_INTERVAL_MS. */
  markDirty(part: StatePart): void {
    this.dirty.add(part);
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      const parts = [...this.dirty];
      this.dirty.clear();
      if (!this.emitter.hasListeners) return;
      for (const part of parts) {
        if (part === 'jobs') this.emitter.fire({ type: 'jobs', jobs: this.state.jobInfos() });
        if (part === 'memory') this.emitter.fire({ type: 'memory', memory: this.state.memoryMap() });
        if (part === 'policy') this.emitter.fire({ type: 'policy', policy: this.state.policyInfo() });
      }
    }, EVENT_INTERVAL_MS);
    this.flushTimer.unref();
  }

  /** The busy meter of one GPU (made at first use). */
  gpuBusy(gpuId: string): BusyMeter {
    let meter = this.busyByGpu.get(gpuId);
    if (!meter) this.busyByGpu.set(gpuId, (meter = new BusyMeter()));
    return meter;
  }

  /** Each GPU's busy share as of the last sample. */
  lastShareByGpu(): Record<string, number> {
    return Object.fromEntries([...this.busyByGpu].map(([id, meter]) => [id, meter.lastShare]));
  }

  /** Sends an event now (job output: not coalesced). */
  publish(event: ServiceEvent): void {
    this.emitter.fire(event);
  }

  /** Samples the busy share and each job's iterations since the last sample. */
  publishMetrics(): void {
    const busyShare = this.busy.sample();
    for (const meter of this.busyByGpu.values()) meter.sample();
    const iterationsPerSecond: Record<string, number> = {};
    const next = this.state.iterationsDone();
    for (const [jobId, done] of next) iterationsPerSecond[jobId] = done - (this.lastIterations.get(jobId) ?? done);
    this.lastIterations = next;
    const byGpu = this.busyByGpu.size > 1 ? { busyShareByGpu: this.lastShareByGpu() } : {};
    this.emitter.fire({ type: 'metrics', at: Date.now(), busyShare, queueLength: this.state.queueLength(), iterationsPerSecond, ...byGpu });
  }

  dispose(): void {
    clearInterval(this.metricsTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.emitter.dispose();
  }
}
