// The scheduler's mechanics: grants, holds, pause, removal, policy switches, events.
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../../core/scheduler/clock.js';
import { createScheduler, JobRemovedError, type SchedulerChange } from '../../../core/scheduler/scheduler.js';
import { settle } from './harness.js';

function setup(policy: 'FIFO' | 'SRTF' | 'PACK' | 'FAIR' | 'PRIORITY' = 'FIFO', params = {}) {
  const clock = createFakeClock();
  const scheduler = createScheduler({ clock, policy, params });
  const granted: string[] = [];
  const ask = (id: string) => scheduler.requestIteration(id).then(() => granted.push(id));
  return { clock, scheduler, granted, ask };
}

describe('grants', () => {
  it('resolves a request at once in an idle lane, and the next one when the iteration finishes', async () => {
    const { clock, scheduler, granted, ask } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void ask('A');
    void ask('B');
    await settle();
    expect(granted).toEqual(['A']);
    expect(scheduler.runningIn('L')).toBe('A');
    clock.advance(40);
    scheduler.finishIteration('A', 40);
    clock.advance(250); // A does not ask again within the hold
    await settle();
    expect(granted).toEqual(['A', 'B']);
    expect(scheduler.jobStats('B')).toEqual({ itersDone: 0, attainedMs: 0, queuedMs: 290, avgIterationMs: null, running: true });
    expect(scheduler.jobStats('A')).toMatchObject({ itersDone: 1, attainedMs: 40, queuedMs: 0, avgIterationMs: 40, running: false });
  });

  it('counts a grant that is not an iteration as attained time only', () => {
    const { scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    void scheduler.requestIteration('A');
    scheduler.finishIteration('A', 40);
    void scheduler.requestIteration('A');
    scheduler.finishIteration('A', 1000, { counted: false });
    expect(scheduler.jobStats('A')).toMatchObject({ itersDone: 1, attainedMs: 1040, avgIterationMs: 40, running: false });
  });

  it('keeps an exponential moving average of iteration time, from the second on (the first is a warm-up)', () => {
    const { scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    const after: (number | null)[] = [];
    for (const gpuMs of [3000, 100, 50]) {
      void scheduler.requestIteration('A');
      scheduler.finishIteration('A', gpuMs);
      after.push(scheduler.jobStats('A')!.avgIterationMs);
    }
    expect(after[0]).toBe(3000); // the only measure so far
    expect(after[1]).toBe(100); // replaces the warm-up
    expect(after[2]).toBeCloseTo(90); // 100 + 0.2 × (50 − 100)
  });

  it('returns the same promise for a repeated request and rejects one made while running', async () => {
    const { scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    const first = scheduler.requestIteration('B');
    expect(scheduler.requestIteration('B')).toBe(first);
    await expect(scheduler.requestIteration('A')).rejects.toThrow(/while one runs/);
    await expect(scheduler.requestIteration('nobody')).rejects.toThrow(/Unknown job "nobody"/);
    expect(() => scheduler.finishIteration('B', 1)).toThrow(/not granted/);
  });
});

describe('hold (workConserving off)', () => {
  it('hands the lane to the next asking job only after holdMs', () => {
    const { clock, scheduler } = setup('FIFO', { holdMs: 250 });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    clock.advance(10);
    scheduler.finishIteration('A', 10);
    clock.advance(249);
    expect(scheduler.runningIn('L')).toBeNull();
    clock.advance(1);
    expect(scheduler.runningIn('L')).toBe('B');
  });

  it('does not hold the lane for a job that has run all its declared iterations', () => {
    const { clock, scheduler } = setup('FIFO', { holdMs: 250 });
    scheduler.addJob({ id: 'A', laneId: 'L', itersTotal: 1 });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    clock.advance(10);
    scheduler.finishIteration('A', 10);
    expect(scheduler.runningIn('L')).toBe('B');
  });

  it('takes a declared run time and share at addJob and live, checking them', () => {
    const { scheduler } = setup('SRTF', { workConserving: true });
    scheduler.addJob({ id: 'busy', laneId: 'L' });
    void scheduler.requestIteration('busy');
    scheduler.addJob({ id: 'A', laneId: 'L', itersTotal: 10, durationMs: 5000 });
    scheduler.addJob({ id: 'B', laneId: 'L', itersTotal: 10, durationMs: 9000 });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    // B now declares 1 s: it goes first at busy's boundary.
    scheduler.setDeclared('B', { durationMs: 1000 });
    scheduler.finishIteration('busy', 10);
    expect(scheduler.runningIn('L')).toBe('B');
    expect(() => scheduler.setDeclared('A', { share: 0 })).toThrow('share must be a finite number above 0, got 0');
    expect(() => scheduler.setDeclared('A', { durationMs: NaN })).toThrow('durationMs must be a finite number');
    expect(() => scheduler.addJob({ id: 'C', laneId: 'L', share: -1 })).toThrow('share must be a finite number above 0, got -1');
  });

  it('gives the lane back to the best job when it asks within holdMs', () => {
    const { clock, scheduler } = setup('FIFO', { holdMs: 250 });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    scheduler.finishIteration('A', 10);
    clock.advance(100);
    void scheduler.requestIteration('A');
    expect(scheduler.runningIn('L')).toBe('A');
    expect(clock.pendingTimers()).toBe(0); // the hold timer is gone
  });

  it('does not wait at all with workConserving on', () => {
    const { scheduler } = setup('FIFO', { workConserving: true });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    scheduler.finishIteration('A', 10);
    expect(scheduler.runningIn('L')).toBe('B');
  });
});

describe('pause and resume', () => {
  it('never grants a paused job, and grants it again once resumed', async () => {
    const { clock, scheduler, granted, ask } = setup('FIFO', { workConserving: true });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    scheduler.pause('A');
    void ask('A');
    void ask('B');
    clock.advance(5);
    scheduler.finishIteration('B', 5);
    void ask('B');
    await settle();
    expect(granted).toEqual(['B', 'B']);
    clock.advance(5);
    scheduler.resume('A');
    scheduler.finishIteration('B', 5);
    await settle();
    expect(granted).toEqual(['B', 'B', 'A']);
    expect(scheduler.jobStats('A')!.queuedMs).toBe(0); // paused time is not queued time
  });

  it('lets a paused job finish the iteration it is running', () => {
    const { scheduler } = setup('FIFO', { workConserving: true });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    scheduler.pause('A');
    expect(scheduler.runningIn('L')).toBe('A');
    void scheduler.requestIteration('B');
    scheduler.finishIteration('A', 10);
    void scheduler.requestIteration('A');
    expect(scheduler.runningIn('L')).toBe('B');
    scheduler.finishIteration('B', 10);
    expect(scheduler.runningIn('L')).toBeNull();
  });
});

describe('removeJob', () => {
  it('frees the lane of a running job and grants the next at once', () => {
    const { scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    const changes: SchedulerChange[] = [];
    scheduler.onDidChange((change) => changes.push(change));
    scheduler.removeJob('A');
    expect(scheduler.runningIn('L')).toBe('B');
    expect(scheduler.jobStats('A')).toBeUndefined();
    // Listeners (the busy meter, the watchdog) hear that A's iteration ended unfinished, before B's grant.
    expect(changes.map((c) => c.type)).toEqual(['abort', 'job', 'grant']);
    expect(changes[0]).toEqual({ type: 'abort', jobId: 'A', laneId: 'L' });
    expect(() => scheduler.finishIteration('A', 10)).not.toThrow(); // late finish of a removed job
    expect(scheduler.runningIn('L')).toBe('B');
  });

  it('rejects the pending request with JobRemovedError', async () => {
    const { scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    const pending = scheduler.requestIteration('B');
    scheduler.removeJob('B');
    await expect(pending).rejects.toBeInstanceOf(JobRemovedError);
  });
});

describe('policy switch', () => {
  it('takes effect at the next boundary only, never preempting a running iteration', () => {
    const { clock, scheduler } = setup('FIFO');
    scheduler.addJob({ id: 'long', laneId: 'L', itersTotal: 1_000 });
    scheduler.addJob({ id: 'short', laneId: 'L', itersTotal: 2 });
    void scheduler.requestIteration('long');
    void scheduler.requestIteration('short');
    scheduler.finishIteration('long', 10);
    void scheduler.requestIteration('long');
    expect(scheduler.runningIn('L')).toBe('long'); // FIFO keeps the older job
    const info = scheduler.setPolicy('SRTF');
    expect(info.name).toBe('SRTF');
    expect(scheduler.runningIn('L')).toBe('long');
    clock.advance(10);
    scheduler.finishIteration('long', 10);
    void scheduler.requestIteration('long');
    expect(scheduler.runningIn('L')).toBe('short');
  });

  it('releases a held lane at once when the new policy is work-conserving', () => {
    const { scheduler } = setup('FIFO');
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    scheduler.finishIteration('A', 10);
    expect(scheduler.runningIn('L')).toBeNull(); // held for A
    scheduler.setPolicy('PACK');
    expect(scheduler.runningIn('L')).toBe('B');
    expect(scheduler.maxLanes()).toBe(16);
  });

  it("keeps each policy's knobs across switches", () => {
    const { scheduler } = setup('SRTF', { holdMs: 500 });
    scheduler.setPolicy('FAIR', { maxLanes: 2 });
    expect(scheduler.policyInfo().params).toEqual({ workConserving: false, holdMs: 50, maxLanes: 2, hangFactor: 50, hangMinMs: 60_000 });
    expect(scheduler.setPolicy('SRTF').params).toMatchObject({ holdMs: 500, defaultIterationMs: 100 });
    expect(scheduler.setPolicy('FAIR').params.maxLanes).toBe(2);
  });
});

describe('lanes', () => {
  it('moves a waiting job to another lane, and lets a running one finish in its old lane', () => {
    const { scheduler } = setup('PACK');
    scheduler.addJob({ id: 'A', laneId: 'L1' });
    scheduler.addJob({ id: 'B', laneId: 'L1' });
    void scheduler.requestIteration('A');
    void scheduler.requestIteration('B');
    scheduler.setLane('B', 'L2');
    expect(scheduler.runningIn('L2')).toBe('B');
    scheduler.setLane('A', 'L2');
    expect(scheduler.runningIn('L1')).toBe('A');
    scheduler.finishIteration('A', 10);
    expect(scheduler.runningIn('L1')).toBeNull();
    void scheduler.requestIteration('A');
    expect(scheduler.runningIn('L2')).toBe('B');
  });
});

describe('onDidChange', () => {
  it('reports grants, finishes, job and policy changes, in order', () => {
    const { scheduler } = setup('FIFO', { workConserving: true });
    const seen: SchedulerChange[] = [];
    const stop = scheduler.onDidChange((change) => seen.push(change));
    scheduler.addJob({ id: 'A', laneId: 'L' });
    void scheduler.requestIteration('A');
    scheduler.finishIteration('A', 7);
    scheduler.setPriority('A', 3);
    scheduler.setParams({ holdMs: 100 });
    stop();
    scheduler.removeJob('A');
    expect(seen.map((c) => c.type)).toEqual(['job', 'grant', 'finish', 'job', 'policy']);
    expect(seen[1]).toEqual({ type: 'grant', jobId: 'A', laneId: 'L', waitedMs: 0 });
    expect(seen[2]).toEqual({ type: 'finish', jobId: 'A', laneId: 'L', gpuMs: 7 });
  });

  it('lets a listener call back in; a throwing listener stops neither the others nor the operation', async () => {
    const clock = createFakeClock();
    const errors: unknown[] = [];
    const scheduler = createScheduler({ clock, policy: 'FIFO', onListenerError: (error) => errors.push(error) });
    const grants: string[] = [];
    scheduler.onDidChange(() => {
      throw new Error('listener bug');
    });
    scheduler.onDidChange((change) => {
      if (change.type === 'grant') grants.push(change.jobId);
      if (change.type === 'job' && change.change === 'added') void scheduler.requestIteration(change.jobId);
    });
    scheduler.addJob({ id: 'A', laneId: 'L' });
    expect(grants).toEqual(['A']);
    expect(scheduler.runningIn('L')).toBe('A');
    scheduler.addJob({ id: 'B', laneId: 'L' });
    scheduler.removeJob('B');
    await expect(scheduler.requestIteration('C')).rejects.toThrow(/Unknown job/);
    scheduler.finishIteration('A', 1);
    expect(errors.map((e) => (e as Error).message)).toEqual(Array(5).fill('listener bug')); // A added, A granted, B added, B removed, A finished
  });
});

describe('dispose', () => {
  it('clears timers and rejects pending requests', async () => {
    const { clock, scheduler } = setup();
    scheduler.addJob({ id: 'A', laneId: 'L' });
    scheduler.addJob({ id: 'B', laneId: 'L' });
    void scheduler.requestIteration('A');
    const pending = scheduler.requestIteration('B');
    scheduler.finishIteration('A', 1);
    expect(clock.pendingTimers()).toBe(1);
    scheduler.dispose();
    expect(clock.pendingTimers()).toBe(0);
    await expect(pending).rejects.toBeInstanceOf(JobRemovedError);
  });
});
