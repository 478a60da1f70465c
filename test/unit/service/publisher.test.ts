// The publisher (core/service/publisher.ts): changes coalesced to one event per
// part per interval, read when the event goes out; metrics sampled on demand;
// nothing read for no one.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EVENT_INTERVAL_MS, Publisher, type PublishedState } from '../../../core/service/publisher.js';
import type { ServiceEvent } from '../../../core/protocol/api.js';
import type { MemoryMap, PolicyInfo } from '../../../core/protocol/state.js';
import { Emitter } from '../../../core/service/events.js';

function stateStandIn() {
  const reads = { jobs: 0, memory: 0, policy: 0 };
  let done = new Map<string, number>();
  const state: PublishedState = {
    jobInfos: () => { reads.jobs += 1; return []; },
    memoryMap: () => { reads.memory += 1; return { usedBytes: reads.memory } as unknown as MemoryMap; },
    policyInfo: () => { reads.policy += 1; return { name: 'FIFO' } as PolicyInfo; },
    iterationsDone: () => done,
    queueLength: () => 2,
  };
  return { state, reads, setDone: (next: Map<string, number>) => { done = next; } };
}

describe('the publisher', () => {
  afterEach(() => vi.useRealTimers());

  it('sends one event per changed part per interval, read when it goes out', () => {
    vi.useFakeTimers();
    const { state, reads } = stateStandIn();
    const publisher = new Publisher(state);
    const heard: ServiceEvent[] = [];
    publisher.onDidPublish((event) => heard.push(event));
    for (let i = 0; i < 50; i += 1) {
      publisher.markDirty('memory');
      publisher.markDirty('jobs');
    }
    expect(heard).toEqual([]);
    vi.advanceTimersByTime(EVENT_INTERVAL_MS);
    expect(heard.map((event) => event.type)).toEqual(['memory', 'jobs']);
    expect(reads).toEqual({ jobs: 1, memory: 1, policy: 0 });
    publisher.markDirty('policy');
    vi.advanceTimersByTime(EVENT_INTERVAL_MS);
    expect(heard.map((event) => event.type)).toEqual(['memory', 'jobs', 'policy']);
    publisher.dispose();
  });

  it('reads nothing when no one listens', () => {
    vi.useFakeTimers();
    const { state, reads } = stateStandIn();
    const publisher = new Publisher(state);
    publisher.markDirty('jobs');
    vi.advanceTimersByTime(EVENT_INTERVAL_MS);
    expect(reads.jobs).toBe(0);
    publisher.dispose();
  });

  it('samples iterations per job since the last sample, and the queue', () => {
    const { state, setDone } = stateStandIn();
    const publisher = new Publisher(state);
    const heard: ServiceEvent[] = [];
    publisher.onDidPublish((event) => heard.push(event));
    setDone(new Map([['job-1', 10]]));
    publisher.publishMetrics();
    setDone(new Map([['job-1', 14], ['job-2', 3]]));
    publisher.publishMetrics();
    const metrics = heard.filter((event) => event.type === 'metrics');
    expect(metrics.map((event) => event.iterationsPerSecond)).toEqual([{ 'job-1': 0 }, { 'job-1': 4, 'job-2': 0 }]);
    expect(metrics[1]).toMatchObject({ queueLength: 2, busyShare: 0 });
    publisher.dispose();
  });
});

describe('an emitter', () => {
  it('calls listeners in order; one added while it fires hears the next value only; unsubscribing stops it', () => {
    const emitter = new Emitter<number>();
    const heard: string[] = [];
    const stopA = emitter.event((n) => {
      heard.push(`a${n}`);
      if (n === 1) emitter.event((m) => heard.push(`late${m}`));
    });
    emitter.event((n) => heard.push(`b${n}`));
    emitter.fire(1);
    stopA();
    emitter.fire(2);
    expect(heard).toEqual(['a1', 'b1', 'b2', 'late2']);
    expect(emitter.hasListeners).toBe(true);
    emitter.dispose();
    expect(emitter.hasListeners).toBe(false);
  });

  it('samples each GPU\'s busy share beside the service\'s, and names them in metrics only with several GPUs', () => {
    const { state } = stateStandIn();
    const publisher = new Publisher(state);
    const heard: ServiceEvent[] = [];
    publisher.onDidPublish((event) => heard.push(event));
    publisher.gpuBusy('gpu0');
    publisher.publishMetrics();
    expect(heard.at(-1)).not.toHaveProperty('busyShareByGpu');
    publisher.gpuBusy('gpu1').start('gpu1/lane-1');
    publisher.busy.start('gpu1/lane-1');
    const until = performance.now() + 20;
    while (performance.now() < until) {
      // A busy stretch on gpu1 only.
    }
    publisher.publishMetrics();
    const metrics = heard.at(-1) as Extract<ServiceEvent, { type: 'metrics' }>;
    expect(metrics.busyShareByGpu?.gpu0).toBe(0);
    expect(metrics.busyShareByGpu?.gpu1).toBeGreaterThan(0.5);
    expect(metrics.busyShare).toBeGreaterThan(0.5);
    expect(publisher.lastShareByGpu()).toEqual(metrics.busyShareByGpu);
    publisher.dispose();
  });
});
