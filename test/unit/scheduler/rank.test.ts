// Policies as pure functions: rank() over plain SchedJob data.
import { describe, expect, it } from 'vitest';
import type { SchedJob } from '../../../core/scheduler/policy.js';
import { POLICIES } from '../../../core/scheduler/policies/registry.js';

let seq = 0;
function job(id: string, fields: Partial<SchedJob> = {}): SchedJob {
  return {
    id, laneId: 'L', arrivalSeq: seq++, submittedAtMs: 0, priority: 0, itersDone: 0, itersTotal: null, durationMs: null, share: 1,
    avgIterationMs: null, firstIterationMs: null, attainedMs: 0, queuedMs: 0, waitingSinceMs: null, paused: false, wantsIteration: true,
    ...fields,
  };
}

function ids(name: keyof typeof POLICIES, jobs: SchedJob[], nowMs = 0, params = {}): string[] {
  const policy = POLICIES[name];
  return policy.rank(jobs, { ...policy.defaults, ...params }, nowMs).map((j) => j.id);
}

describe('rank', () => {
  it('FIFO and PACK: arrival order, whatever else differs', () => {
    const jobs = [job('a', { priority: -1, attainedMs: 99 }), job('b', { priority: 9 }), job('c')];
    expect(ids('FIFO', [jobs[2], jobs[0], jobs[1]])).toEqual(['a', 'b', 'c']);
    expect(ids('PACK', [jobs[1], jobs[2], jobs[0]])).toEqual(['a', 'b', 'c']);
  });

  it('SRTF: measured jobs by iterations left × average, unmeasured ones by what they declare', () => {
    const jobs = [
      job('slow', { itersTotal: 10, itersDone: 5, avgIterationMs: 100 }), // 500
      job('fast', { itersTotal: 100, itersDone: 60, avgIterationMs: 10 }), // 400
      job('declared', { itersTotal: 50, durationMs: 300 }), // its declared run time, 300
      job('few', { itersTotal: 8 }), // 8 × 100, the pace of the slowest measured = 800
      job('unknown', { avgIterationMs: 1, itersDone: 3 }), // no total, no duration: last, though measured and fast
      job('timed', { durationMs: 1_000, attainedMs: 950 }), // no total: declared − attained = 50
      job('over', { durationMs: 1_000, attainedMs: 1_500 }), // ran past its declaration: 0, never negative
    ];
    expect(ids('SRTF', jobs)).toEqual(['over', 'timed', 'declared', 'fast', 'slow', 'few', 'unknown']);
    // Measured, a job's own average wins over what it declared.
    const wrong = job('wrong', { itersTotal: 50, itersDone: 2, durationMs: 300, avgIterationMs: 100 }); // 4800
    expect(ids('SRTF', [wrong, jobs[0]])).toEqual(['slow', 'wrong']);
  });

  it('SRTF: jobs arriving together, declaring only iterations, go shortest declared first (nothing measured first)', () => {
    const newcomers = [10, 9, 3, 1].map((n) => job(`n${n}`, { itersTotal: n }));
    expect(ids('SRTF', newcomers)).toEqual(['n1', 'n3', 'n9', 'n10']);
    // Once one is measured, the others rank as fast as it, their warm-up at its first iteration's cost.
    const running = job('n3', { itersTotal: 3, itersDone: 2, avgIterationMs: 1_000, firstIterationMs: 1_000 }); // 1000
    const four = job('n4', { itersTotal: 4 }); // 1000 + 3 × 1000
    expect(ids('SRTF', [four, running])).toEqual(['n3', 'n4']);
  });

  it('SRTF: a job declaring many iterations is measured early, but not ahead of a job with less left than a warm-up', () => {
    const near = job('near', { itersTotal: 10, itersDone: 9, avgIterationMs: 10, firstIterationMs: 1000 }); // 10 left
    const mid = job('mid', { itersTotal: 50, itersDone: 5, avgIterationMs: 10, firstIterationMs: 2000 }); // 450 left
    const far = job('far', { itersTotal: 500, itersDone: 5, avgIterationMs: 10, firstIterationMs: 3000 }); // 4950 left
    const newbie = job('newbie', { itersTotal: 1_000 }); // measured early: ranks as mean(1000, 2000, 3000) = 2000
    expect(ids('SRTF', [far, newbie, mid, near])).toEqual(['near', 'mid', 'newbie', 'far']);
    // Its second iteration (the one that measures it) ranks so too, whatever its warm-up cost; from then on its own average.
    const warmed = { ...newbie, itersDone: 1, avgIterationMs: 5000, firstIterationMs: 5000 }; // mean(1000..5000) = 2750
    expect(ids('SRTF', [far, warmed, mid, near])).toEqual(['near', 'mid', 'newbie', 'far']);
    expect(ids('SRTF', [far, { ...warmed, itersDone: 2, avgIterationMs: 10 }, mid, near])).toEqual(['near', 'mid', 'far', 'newbie']);
    // With nothing run in the lane, measuring goes first of all, the shorter declared first.
    expect(ids('SRTF', [job('big', { itersTotal: 900 }), job('small', { itersTotal: 30 })])).toEqual(['small', 'big']);
  });

  it('SRTF: a job of few iterations is not measured early; it runs at the pace of its lane\'s slowest measured job', () => {
    const slow = job('slow', { itersTotal: 20, itersDone: 10, avgIterationMs: 100, firstIterationMs: 100 }); // 1000 left
    const fast = job('fast', { itersTotal: 1000, itersDone: 10, avgIterationMs: 10, firstIterationMs: 100 }); // 9900 left
    const few = job('few', { itersTotal: 15 }); // 100 + 14 × 100 = 1500, though fast's iterations are 10 ms
    expect(ids('SRTF', [fast, few, slow])).toEqual(['slow', 'few', 'fast']);
    // Its own first iteration bounds its pace: 14 × 20 = 280.
    expect(ids('SRTF', [fast, { ...few, itersDone: 1, avgIterationMs: 20, firstIterationMs: 20 }, slow])).toEqual(['few', 'slow', 'fast']);
  });

  it('SRTF without probeFirst: unmeasured jobs use the mean of the measured ones', () => {
    const jobs = [
      job('slow', { itersTotal: 10, itersDone: 5, avgIterationMs: 100 }), // 500
      job('fast', { itersTotal: 100, itersDone: 60, avgIterationMs: 10 }), // 400
      job('new', { itersTotal: 8 }), // 8 × mean(100, 10, 1) = 296
      job('unknown', { avgIterationMs: 1, itersDone: 3 }), // no total: last, though measured and fast
    ];
    expect(ids('SRTF', jobs, 0, { probeFirst: false })).toEqual(['new', 'fast', 'slow', 'unknown']);
  });

  it('SRTF without probeFirst: with nothing measured, defaultIterationMs stands in; ties and unknown totals go by arrival', () => {
    const jobs = [job('u1'), job('t5', { itersTotal: 5 }), job('u2'), job('t5b', { itersTotal: 5 }), job('t1', { itersTotal: 1 })];
    expect(ids('SRTF', jobs, 0, { probeFirst: false })).toEqual(['t1', 't5', 't5b', 'u1', 'u2']);
    // A measured job is compared with the unmeasured ones at its own average when it is alone.
    const mixed = [job('m', { itersTotal: 5, itersDone: 2, avgIterationMs: 50 }), job('n', { itersTotal: 2 })];
    expect(ids('SRTF', mixed, 0, { probeFirst: false })).toEqual(['n', 'm']); // n: 2 × 50 = 100 < 150
  });

  it('FAIR: least attained first, ties by arrival', () => {
    const jobs = [job('a', { attainedMs: 30 }), job('b', { attainedMs: 10 }), job('c', { attainedMs: 10 })];
    expect(ids('FAIR', jobs)).toEqual(['b', 'c', 'a']);
  });

  it('FAIR: least attained per unit of share first', () => {
    const jobs = [job('a', { attainedMs: 30, share: 3 }), job('b', { attainedMs: 12 }), job('c', { attainedMs: 10 })];
    expect(ids('FAIR', jobs)).toEqual(['a', 'c', 'b']); // 30 / 3 = 10 ties c's 10 and came first; then 12
  });

  it('PRIORITY: higher first; waiting raises a job by agingPerSecond per second', () => {
    const jobs = [
      job('low', { priority: 1, waitingSinceMs: 0 }),
      job('high', { priority: 3, waitingSinceMs: 24_000 }),
      job('idle', { priority: 2, waitingSinceMs: null }),
    ];
    expect(ids('PRIORITY', jobs, 5_000)).toEqual(['high', 'idle', 'low']); // low: 1 + 0.1 × 5 = 1.5
    expect(ids('PRIORITY', jobs, 10_000)).toEqual(['high', 'low', 'idle']); // low: 2, tie with idle → arrival
    expect(ids('PRIORITY', jobs, 25_000)).toEqual(['low', 'high', 'idle']); // low: 3.5, high: 3 + 0.1
    expect(ids('PRIORITY', jobs, 25_000, { agingPerSecond: 0 })).toEqual(['high', 'idle', 'low']);
  });

  it('returns a new array and leaves its input alone', () => {
    const jobs = [job('b', { attainedMs: 5 }), job('a')];
    const copy = [...jobs];
    for (const policy of Object.values(POLICIES)) {
      const ranked = policy.rank(jobs, policy.defaults, 0);
      expect(ranked).not.toBe(jobs);
      expect(jobs).toEqual(copy);
    }
  });
});
