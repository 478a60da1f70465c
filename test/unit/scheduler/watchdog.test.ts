// The iteration watchdog: limits relative to a job's average, first iterations, knobs, and quiet for iterations that end.
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../../core/scheduler/clock.js';
import { createScheduler } from '../../../core/scheduler/scheduler.js';
import { describeHung, iterationLimitMs, watchIterations, type HungIteration } from '../../../core/scheduler/watchdog.js';
import { settle } from './harness.js';

function setup(params: Record<string, number | boolean> = {}) {
  const clock = createFakeClock();
  const scheduler = createScheduler({ clock, policy: 'FIFO', params: { workConserving: true, ...params } });
  const hung: HungIteration[] = [];
  const stop = watchIterations(scheduler, (h) => hung.push(h), clock);
  /** Runs `count` iterations of `gpuMs` each for job `id`. */
  const iterate = (id: string, count: number, gpuMs: number) => {
    for (let i = 0; i < count; i++) {
      void scheduler.requestIteration(id);
      clock.advance(gpuMs);
      scheduler.finishIteration(id, gpuMs);
    }
  };
  return { clock, scheduler, hung, stop, iterate };
}

describe('iterationLimitMs', () => {
  it('is hangFactor times the average, at least hangMinMs, a multiple of that for a first iteration, and off at 0', () => {
    expect(iterationLimitMs({ hangFactor: 50, hangMinMs: 60_000 }, 10)).toBe(60_000);
    expect(iterationLimitMs({ hangFactor: 50, hangMinMs: 60_000 }, 2000)).toBe(100_000);
    expect(iterationLimitMs({ hangFactor: 50, hangMinMs: 60_000 }, null)).toBe(300_000);
    expect(iterationLimitMs({ hangFactor: 0, hangMinMs: 60_000 }, 10)).toBeNull();
  });
});

describe('watchIterations', () => {
  it('reports an iteration that runs past its limit once, with what it knew', async () => {
    const { clock, scheduler, hung, iterate } = setup({ hangFactor: 10, hangMinMs: 1000 });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    iterate('A', 3, 200); // average 200 ms: limit max(1000, 2000) = 2000 ms
    void scheduler.requestIteration('A');
    await settle();
    clock.advance(1999);
    expect(hung).toEqual([]);
    clock.advance(1);
    expect(hung).toEqual([{ jobId: 'A', laneId: 'L', elapsedMs: 2000, limitMs: 2000, avgIterationMs: 200 }]);
    clock.advance(100_000);
    expect(hung).toHaveLength(1);
    expect(describeHung(hung[0])).toMatch(/an iteration ran 2\.0 s, past its limit of 2\.0 s \(average iteration 200\.0 ms\).*hangFactor/);
  });

  it('gives a first iteration five times hangMinMs', async () => {
    const { clock, scheduler, hung } = setup({ hangFactor: 10, hangMinMs: 1000 });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    void scheduler.requestIteration('A');
    await settle();
    clock.advance(4999);
    expect(hung).toEqual([]);
    clock.advance(1);
    expect(hung[0]).toMatchObject({ jobId: 'A', limitMs: 5000, avgIterationMs: null });
  });

  it('stays quiet for iterations that finish, jobs removed mid-iteration, a watchdog turned off, and after stop', async () => {
    const { clock, scheduler, hung, stop, iterate } = setup({ hangFactor: 10, hangMinMs: 1000 });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'M' });
    iterate('A', 20, 900); // each well within its limit
    void scheduler.requestIteration('B');
    await settle();
    scheduler.removeJob('B');
    clock.advance(60_000);
    expect(hung).toEqual([]);

    scheduler.setParams({ hangFactor: 0 });
    void scheduler.requestIteration('A');
    clock.advance(1_000_000);
    expect(hung).toEqual([]);
    scheduler.finishIteration('A', 1);

    scheduler.setParams({ hangFactor: 10 });
    void scheduler.requestIteration('A');
    stop();
    clock.advance(1_000_000);
    expect(hung).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('is a knob of every policy, checked like the others', () => {
    for (const policy of ['FIFO', 'SRTF', 'PACK', 'FAIR', 'PRIORITY'] as const) {
      const scheduler = createScheduler({ clock: createFakeClock(), policy });
      expect(scheduler.policyInfo().params).toMatchObject({ hangFactor: 50, hangMinMs: 60_000 });
      expect(() => scheduler.setParams({ hangMinMs: 10 })).toThrow(/hangMinMs: 10 is below 1000/);
    }
  });
});
