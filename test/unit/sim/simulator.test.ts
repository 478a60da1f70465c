/**
 * The simulator on traces small enough to work out by hand: the real scheduler and
 * memory manager decide, the expected numbers come from the policies' definitions.
 */
import { describe, expect, it } from 'vitest';
import { simulate, type SimResult } from '../../../core/sim/simulator.js';
import type { TraceJob } from '../../../core/sim/trace.js';
import { shortestFirstAvgJctMs } from './optimum.js';

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

  it('SRTF switches to the shortest remaining job at iteration boundaries', () => {
    const result = simulate(three, { policy: 'SRTF' });
    // A 0–100; B (arrived at 50) ranks as a first iteration here (100) + 1 × 100 against A's 9 × 100: B 100–300;
    // C (arrived at 150): 100 + 4 × 100 = 500 against A's 900: C 300–800; A 800–1700. The optimum at boundaries.
    expect(jct(result)).toEqual({ A: 1700, B: 250, C: 650 });
    expect(result.avgJctMs).toBeCloseTo(2600 / 3, 6);
    expect(result.makespanMs).toBe(1700);
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

  it('divides GPU time by shares under FAIR, and only there', () => {
    const trace = [job('a', 0, 40, 100, { share: 3 }), job('b', 0, 40, 100, { share: 1 })];
    // a takes three iterations to b's one until its 40 are done at 5.3 s: 4 of 5.3 s (75.5%, within an iteration of 3/4).
    expect(jct(simulate(trace, { policy: 'FAIR' }))).toEqual({ a: 5300, b: 8000 });
    // Equal shares take turns; the other policies ignore shares.
    expect(jct(simulate(trace.map((j) => ({ ...j, share: 1 })), { policy: 'FAIR' }))).toEqual({ a: 7900, b: 8000 });
    expect(jct(simulate(trace, { policy: 'FIFO' }))).toEqual({ a: 4000, b: 8000 });
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

describe('SRTF on traces solved by hand (the optimum\'s average JCT within 2%)', () => {
  const within2 = (result: SimResult, optimumMs: number) => expect(Math.abs(result.avgJctMs! / optimumMs - 1)).toBeLessThan(0.02);

  it('ten jobs arriving together, declaring 10, 9, …, 1 iterations of 1 s: shortest first, 22.0 s', () => {
    const trace = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1].map((n) => job(`j${n}`, 0, n, 1000));
    const optimumMs = shortestFirstAvgJctMs(trace.map((j) => j.iterations * j.iterationMs));
    expect(optimumMs).toBe(22_000);
    const srtf = simulate(trace, { policy: 'SRTF' });
    within2(srtf, optimumMs);
    expect(srtf.avgJctMs).toBe(22_000); // exact: nothing is measured out of order
    expect(simulate(trace, { policy: 'FIFO' }).avgJctMs).toBe(38_500);
  });

  it('staggered arrivals, preempting at iteration boundaries', () => {
    // A: 10 × 1 s from 0; B: 2 × 1 s from 2.5 s; C: 1 × 1 s from 4.5 s. At A's boundary at 3 s, B (2 s) preempts A
    // (7 s left): B 3–5; C 5–6 (B and C tie at 4 s: 1 s each, B came first); A 6–13. JCTs 13, 2.5, 1.5.
    const trace = [job('A', 0, 10, 1000), job('B', 2.5, 2, 1000), job('C', 4.5, 1, 1000)];
    const srtf = simulate(trace, { policy: 'SRTF' });
    expect(jct(srtf)).toEqual({ A: 13_000, B: 2500, C: 1500 });
    within2(srtf, 17_000 / 3);
  });

  it('mixed iteration times, once measured or declared', () => {
    // L: 20 × 500 ms from 0, measured by 1 s. D: 100 × 20 ms (2 s) and S: 6 × 500 ms (3 s), both from 1.2 s; D declares
    // its 2 s (faster iterations than any measured: without it nothing says so), S only its iterations. At L's boundary
    // at 1.5 s: D 2 s < S 0.5 + 5 × 0.5 = 3 s < L 8.5 s: D 1.5–3.5, S 3.5–6.5, L 6.5–15. JCTs 15, 2.3, 5.3 s.
    const trace = [job('L', 0, 20, 500), job('D', 1.2, 100, 20, { durationMs: 2000 }), job('S', 1.2, 6, 500)];
    const srtf = simulate(trace, { policy: 'SRTF' });
    expect(jct(srtf)).toEqual({ L: 15_000, D: 2300, S: 5300 });
    within2(srtf, (15_000 + 2300 + 5300) / 3);
    // Jobs of many iterations are measured early (two iterations each, shorter declared first): X (100 × 100 ms, 10 s)
    // and Y (400 × 10 ms, 4 s) together: X 0–0.2 s, Y measured 0.2–0.22 s and, shorter, runs to 4.2 s; X to 14 s.
    // Optimum 4 and 14 s, 9 s on average; measuring X first cost Y 0.2 s.
    const measured = simulate([job('X', 0, 100, 100), job('Y', 0, 400, 10)], { policy: 'SRTF' });
    expect(jct(measured)).toEqual({ X: 14_000, Y: 4200 });
    within2(measured, 9000);
  });

  it('runs jobs that do not fit together on one GPU side by side on two (--gpus 2), one on each', () => {
    const MiB = 1024 ** 2;
    const big = (name: string) => job(name, 0, 10, 100, { persistentBytes: 40 * MiB, ephemeralBytes: 4 * MiB });
    const one = simulate([big('A'), big('B')], { policy: 'FIFO', capacityBytes: 64 * MiB });
    expect(jct(one)).toEqual({ A: 1000, B: 2000 });
    expect(one.jobs.map((j) => j.gpu)).toEqual(['gpu0', 'gpu0']);
    const two = simulate([big('A'), big('B')], { policy: 'FIFO', capacityBytes: 64 * MiB, gpus: 2 });
    expect(jct(two)).toEqual({ A: 1000, B: 1000 });
    expect(two.jobs.map((j) => [j.gpu, j.lane])).toEqual([['gpu0', 'gpu0/lane-1'], ['gpu1', 'gpu1/lane-1']]);
    expect(two.gpus).toBe(2);
    expect(two.peakLanes).toBe(2);
    // Too big for either GPU: refused, naming the largest.
    const refused = simulate([job('H', 0, 1, 100, { persistentBytes: 100 * MiB })], { capacityBytes: 64 * MiB, gpus: 2 });
    expect(refused.jobs[0].reason).toMatch(/the largest GPU, gpu0, of 64 MiB/);
    expect(() => simulate([big('A')], { gpus: 0 })).toThrow(/at least 1/);
  });
});
