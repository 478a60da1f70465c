/**
 * The simulator on traces small enough to work out by hand: the real scheduler and
 * memory manager decide, the expected numbers come from the policies' definitions.
 */
import { describe, expect, it } from 'vitest';
import { simulate, type SimResult } from '../../../core/sim/simulator.js';
import type { TraceJob } from '../../../core/sim/trace.js';

function job(name: string, arrivalS: number, iterations: number, iterationMs: number, more: Partial<TraceJob> = {}): TraceJob {
  return { name, arrivalS, iterations, iterationMs, persistentBytes: 0, ephemeralBytes: 0, priority: 0, gapMs: 0, ...more };
}

const jct = (result: SimResult) => Object.fromEntries(result.jobs.map((j) => [j.name, j.jctMs]));

describe('simulate', () => {
  // A: 10 × 100 ms from 0 s; B: 2 × 100 ms from 0.05 s; C: 5 × 100 ms from 0.15 s.
  const three = [job('A', 0, 10, 100), job('B', 0.05, 2, 100), job('C', 0.15, 5, 100)];

  it('FIFO runs each job to the end in arrival order', () => {
    const result = simulate(three, { policy: 'FIFO' });
    // A 0–1000, B 1000–1200, C 1200–1700.
    expect(jct(result)).toEqual({ A: 1000, B: 1150, C: 1550 });
    expect(result.avgJctMs).toBeCloseTo(3700 / 3, 6);
    expect(result.makespanMs).toBe(1700);
    expect(result.jobs.map((j) => j.queuedMs)).toEqual([0, 950, 1050]);
  });

  it('SRTF switches to the shortest remaining job at iteration boundaries, measuring a new job first', () => {
    const result = simulate(three, { policy: 'SRTF' });
    // New jobs are measured by two iterations, each ranked as a first iteration costs here (100 ms; the very first,
    // with nothing measured, ahead of all), ties by arrival: A 0–200; B (arrived at 50) 200–400, done; C (arrived
    // at 150) 400–600, then 300 ms left against A's 800: C 600–900; A 900–1700.
    expect(jct(result)).toEqual({ A: 1700, B: 350, C: 750 });
    expect(result.avgJctMs).toBeCloseTo(2800 / 3, 6);
    expect(result.makespanMs).toBe(1700);
    // Guessing instead (a new job as fast as the measured ones): B (200 ms) 100–300; C (500 ms) 300–800; A 800–1700.
    const guessing = simulate(three, { policy: 'SRTF', params: { probeFirst: false } });
    expect(jct(guessing)).toEqual({ A: 1700, B: 250, C: 650 });
  });

  it('lets jobs arriving at the same time arrive in file order', () => {
    const ab = simulate([job('a', 1, 2, 100), job('b', 1, 1, 100)], { policy: 'FIFO' });
    expect(ab.jobs.map((j) => j.finishMs)).toEqual([1200, 1300]);
    const ba = simulate([job('b', 1, 1, 100), job('a', 1, 2, 100)], { policy: 'FIFO' });
    expect(ba.jobs.map((j) => j.finishMs)).toEqual([1100, 1300]);
  });

  it('accounts every millisecond: JCT = queued + iterations + gaps', () => {
    const trace = [job('A', 0, 4, 30, { gapMs: 7 }), job('B', 0.01, 3, 50, { gapMs: 20 }), job('C', 0.02, 5, 10)];
    for (const policy of ['FIFO', 'SRTF', 'PACK', 'FAIR', 'PRIORITY']) {
      const result = simulate(trace, { policy });
      for (const [i, j] of result.jobs.entries()) {
        const spec = trace[i];
        expect(j.jctMs, `${policy} ${j.name}`).toBeCloseTo(j.queuedMs! + spec.iterations * spec.iterationMs + (spec.iterations - 1) * spec.gapMs, 6);
      }
    }
  });

  it('holds a strict lane through a gap shorter than holdMs, and hands it on after a longer one', () => {
    // A: 2 × 100 ms with 300 ms of CPU between; B: 1 × 100 ms, arriving at 10 ms. FIFO holds 250 ms.
    const long = simulate([job('A', 0, 2, 100, { gapMs: 300 }), job('B', 0.01, 1, 100)], { policy: 'FIFO' });
    // A 0–100; hold until 350; B 350–450; A asked at 400, runs 450–550.
    expect(jct(long)).toEqual({ A: 550, B: 440 });
    const short = simulate([job('A', 0, 2, 100, { gapMs: 200 }), job('B', 0.01, 1, 100)], { policy: 'FIFO' });
    // A 0–100, asks again at 300 inside its hold, runs 300–400; B 400–500.
    expect(jct(short)).toEqual({ A: 400, B: 490 });
    const conserving = simulate([job('A', 0, 2, 100, { gapMs: 200 }), job('B', 0.01, 1, 100)], { policy: 'FIFO', params: { workConserving: true } });
    // Work-conserving: B takes the lane at A's first boundary, 100–200; A runs 300–400.
    expect(jct(conserving)).toEqual({ A: 400, B: 190 });
  });

  it('keeps a job that does not fit waiting for memory, while a small one passes it', () => {
    const KiB = 1024;
    // Capacity 1000 KiB, one lane (FIFO): X holds 440 KiB persistent (400 + 10%) + a 420 KiB lane.
    const trace = [
      job('X', 0, 5, 100, { persistentBytes: 400 * KiB, ephemeralBytes: 400 * KiB }),
      job('Y', 0.1, 1, 100, { persistentBytes: 400 * KiB, ephemeralBytes: 400 * KiB }),
      job('Z', 0.2, 1, 100, { persistentBytes: 50 * KiB, ephemeralBytes: 100 * KiB }),
      job('huge', 0.3, 1, 100, { persistentBytes: 2000 * KiB }),
    ];
    const result = simulate(trace, { policy: 'FIFO', capacityBytes: 1000 * KiB });
    const [x, y, z, huge] = result.jobs;
    expect(x).toMatchObject({ admittedMs: 0, finishMs: 500 });
    // Z fits beside X (55 KiB more, in X's lane) and runs after X; Y waits for X to leave.
    expect(z).toMatchObject({ admittedMs: 200, admissionWaitMs: 0, lane: x.lane, finishMs: 600 });
    expect(y).toMatchObject({ admittedMs: 500, admissionWaitMs: 400, finishMs: 700, jctMs: 600 });
    expect(huge.state).toBe('refused');
    expect(huge.reason).toMatch(/can never fit/);
    expect(result.avgJctMs).toBeCloseTo((500 + 600 + 400) / 3, 6);
  });

  it('runs PACK lanes side by side', () => {
    const MiB = 1024 ** 2;
    const trace = ['a', 'b', 'c'].map((name) => job(name, 0, 10, 100, { persistentBytes: MiB, ephemeralBytes: 4 * MiB }));
    const pack = simulate(trace, { policy: 'PACK' });
    expect(new Set(pack.jobs.map((j) => j.lane)).size).toBe(3);
    expect(pack.peakLanes).toBe(3);
    expect(jct(pack)).toEqual({ a: 1000, b: 1000, c: 1000 });
    // Two lanes: a and b side by side, c joins the lane that needs the least growth (the first) and runs after a.
    const two = simulate(trace, { policy: 'PACK', params: { maxLanes: 2 } });
    expect(two.peakLanes).toBe(2);
    expect(two.makespanMs).toBe(2000);
    // Memory for only one lane's worth of ephemeral: everything runs in one lane, one iteration at a time.
    const tight = simulate(trace, { policy: 'PACK', capacityBytes: 9 * MiB });
    expect(tight.peakLanes).toBe(1);
    expect(tight.makespanMs).toBe(3000);
  });

  it('shares the GPU between lanes as maxSpeedup says', () => {
    const trace = [job('a', 0, 10, 100), job('b', 0, 10, 100)];
    // Taking turns only: two lanes at half speed each end together, when one lane would have ended both.
    const shared = simulate(trace, { policy: 'PACK', maxSpeedup: 1 });
    expect(shared.peakLanes).toBe(2);
    expect(jct(shared)).toEqual({ a: 2000, b: 2000 });
    expect(shared.jobs.map((j) => j.gpuMs)).toEqual([2000, 2000]);
    // 1.5× the work at once: each lane at 0.75 of full speed.
    expect(simulate(trace, { policy: 'PACK', maxSpeedup: 1.5 }).makespanMs).toBeCloseTo(1000 / 0.75, 6);
    // Rates change as iterations come and go: b's one iteration at half speed, 0–200; a's second alone, 200–300.
    const uneven = simulate([job('a', 0, 2, 100), job('b', 0, 1, 100)], { policy: 'PACK', maxSpeedup: 1 });
    expect(jct(uneven)).toEqual({ a: 300, b: 200 });
    // b arrives half-way through a's iteration: a has 50 ms of work left, done at half speed by 150; b's iteration
    // runs 50–150 at half speed (50 ms of work), then alone 150–200.
    const late = simulate([job('a', 0, 1, 100), job('b', 0.05, 1, 100)], { policy: 'PACK', maxSpeedup: 1 });
    expect(jct(late)).toEqual({ a: 150, b: 150 });
    expect(() => simulate(trace, { policy: 'PACK', maxSpeedup: 0.5 })).toThrow(/must be 1 or more, got 0.5/);
  });

  it('runs the highest priority first under PRIORITY', () => {
    const trace = [job('busy', 0, 3, 100), job('low', 0.01, 2, 100, { priority: 1 }), job('high', 0.02, 2, 100, { priority: 5 })];
    const result = simulate(trace, { policy: 'PRIORITY', params: { agingPerSecond: 0 } });
    // busy's first iteration 0–100, then high 100–300, low 300–500, busy 500–700.
    expect(jct(result)).toEqual({ busy: 700, low: 490, high: 280 });
  });

  it('answers the same for the same input, and refuses an unknown policy in the user\'s words', () => {
    const trace = [job('A', 0, 3, 10), job('B', 0, 3, 10)];
    expect(simulate(trace, { policy: 'FAIR' })).toEqual(simulate(trace, { policy: 'FAIR' }));
    expect(() => simulate(trace, { policy: 'LIFO' })).toThrow(/Unknown policy "LIFO"; valid policies: FIFO, SRTF, PACK, FAIR, PRIORITY/);
  });
});
