// Each policy's order, shown end to end: simulated jobs on a fake clock.
import { describe, expect, it } from 'vitest';
import { simulate } from './harness.js';

describe('FIFO', () => {
  it('finishes the first job before the second starts, though both ask throughout', () => {
    const sim = simulate([
      { id: 'A', gpuMs: 10, cpuMs: 5, iters: 3 },
      { id: 'B', gpuMs: 10, cpuMs: 5, iters: 3 },
    ]);
    sim.clock.advance(1_000);
    expect(sim.order()).toEqual(['A', 'A', 'A', 'B', 'B', 'B']);
    expect(sim.doneAtMs.get('A')).toBe(40); // 3 × 10 ms GPU + 2 × 5 ms CPU
  });
});

describe('SRTF', () => {
  it("runs a short job's iterations before a long one's, even when the long one came first", () => {
    const sim = simulate(
      [
        { id: 'long', gpuMs: 10, iters: 100 },
        { id: 'short', gpuMs: 10, iters: 5, startAtMs: 25 },
      ],
      { policy: 'SRTF' },
    );
    sim.clock.advance(2_000);
    // The long job's third iteration (20–30 ms) is not preempted; the short one runs from 30.
    expect(sim.order().slice(0, 9)).toEqual(['long', 'long', 'long', 'short', 'short', 'short', 'short', 'short', 'long']);
    expect(sim.doneAtMs.get('short')).toBe(80);
    expect(sim.doneAtMs.get('long')).toBe(1_050);
  });

  it('ranks a job with no declared total after the ones with one', () => {
    const sim = simulate(
      [
        { id: 'unknown', gpuMs: 10, iters: 3, declareTotal: false },
        { id: 'known', gpuMs: 10, iters: 50, startAtMs: 5 },
      ],
      { policy: 'SRTF' },
    );
    sim.clock.advance(2_000);
    expect(sim.runs()).toEqual(['unknown', 'known', 'unknown']);
  });
});

describe('FAIR', () => {
  it('moves toward equal attained GPU time when iteration lengths differ', () => {
    const sim = simulate(
      [
        { id: 'slow', gpuMs: 30, cpuMs: 1 },
        { id: 'quick', gpuMs: 10, cpuMs: 1 },
      ],
      { policy: 'FAIR' },
    );
    let worstGapMs = 0;
    sim.scheduler.onDidChange((change) => {
      if (change.type !== 'finish') return;
      const gap = Math.abs(sim.scheduler.jobStats('slow')!.attainedMs - sim.scheduler.jobStats('quick')!.attainedMs);
      worstGapMs = Math.max(worstGapMs, gap);
    });
    sim.clock.advance(3_000);
    const slow = sim.scheduler.jobStats('slow')!;
    const quick = sim.scheduler.jobStats('quick')!;
    expect(worstGapMs).toBeLessThanOrEqual(30); // never more than one slow iteration apart
    expect(quick.itersDone).toBeGreaterThanOrEqual(3 * slow.itersDone - 3);
    expect(sim.order().slice(0, 8)).toEqual(['slow', 'quick', 'quick', 'quick', 'slow', 'quick', 'quick', 'quick']);
  });

  it('with workConserving on, hands the lane to another asking job at every boundary', () => {
    const sim = simulate(
      [
        { id: 'slow', gpuMs: 30, cpuMs: 1 },
        { id: 'quick', gpuMs: 10, cpuMs: 1 },
      ],
      { policy: 'FAIR', params: { workConserving: true } },
    );
    sim.clock.advance(400);
    expect(sim.runs()).toEqual(sim.order()); // strict alternation: no idle lane, no job twice in a row
  });
});

describe('PRIORITY', () => {
  it('runs the higher priority first, and aging lets a waiting low one through', () => {
    const sim = simulate(
      [
        { id: 'high', gpuMs: 1_000, priority: 5 },
        { id: 'low', gpuMs: 1_000, priority: 0 },
      ],
      { policy: 'PRIORITY' }, // agingPerSecond 0.1: the low job passes 5 after 50 s of waiting
    );
    sim.clock.advance(60_000);
    const firstLow = sim.grants.find((g) => g.jobId === 'low')!;
    expect(sim.grants.filter((g) => g.atMs < firstLow.atMs).every((g) => g.jobId === 'high')).toBe(true);
    expect(firstLow.atMs).toBe(51_000);
    // Its wait restarts once granted, so the high job takes the lane straight back.
    expect(sim.grants.find((g) => g.atMs > firstLow.atMs)!.jobId).toBe('high');
  });

  it('never lets the low one through without aging', () => {
    const sim = simulate(
      [
        { id: 'high', gpuMs: 1_000, priority: 5 },
        { id: 'low', gpuMs: 1_000, priority: 0 },
      ],
      { policy: 'PRIORITY', params: { agingPerSecond: 0 } },
    );
    sim.clock.advance(200_000);
    expect(new Set(sim.order())).toEqual(new Set(['high']));
  });
});

describe('PACK', () => {
  it('grants iterations in two lanes at once, arrival order inside each', () => {
    const sim = simulate(
      [
        { id: 'A', laneId: 'lane-1', gpuMs: 10, iters: 2 },
        { id: 'B', laneId: 'lane-2', gpuMs: 10, iters: 2 },
        { id: 'C', laneId: 'lane-1', gpuMs: 10, iters: 2 },
      ],
      { policy: 'PACK' },
    );
    sim.clock.advance(0);
    expect(sim.scheduler.runningIn('lane-1')).toBe('A');
    expect(sim.scheduler.runningIn('lane-2')).toBe('B');
    expect(sim.scheduler.maxLanes()).toBe(16);
    sim.clock.advance(1_000);
    expect(sim.doneAtMs.get('B')).toBe(20);
    expect(sim.grants.filter((g) => g.laneId === 'lane-1').map((g) => g.atMs)).toEqual([0, 10, 20, 30]);
  });
});
