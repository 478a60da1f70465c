// Policies as pure functions: rank() over plain SchedJob data.
import { describe, expect, it } from 'vitest';
import type { SchedJob } from '../../../core/scheduler/policy.js';
import { POLICIES } from '../../../core/scheduler/policies/registry.js';

let seq = 0;
function job(id: string, fields: Partial<SchedJob> = {}): SchedJob {
  return {
    id, laneId: 'L', arrivalSeq: seq++, submittedAtMs: 0, priority: 0, itersDone: 0, itersTotal: null,
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

  it('SRTF: remaining = iterations left × average; a new job with a total is measured first (probeFirst)', () => {
    const jobs = [
      job('slow', { itersTotal: 10, itersDone: 5, avgIterationMs: 100 }), // 500
      job('fast', { itersTotal: 100, itersDone: 60, avgIterationMs: 10 }), // 400
      job('huge', { itersTotal: 8_000 }), // new: one iteration first, whatever its length
      job('unknown', { avgIterationMs: 1 }), // no total: last, though measured and fast
    ];
    expect(ids('SRTF', jobs)).toEqual(['huge', 'fast', 'slow', 'unknown']);
    const newcomers = [job('n1', { itersTotal: 9 }), job('n2', { itersTotal: 2 }), job('done', { itersTotal: 2, itersDone: 2 })];
    expect(ids('SRTF', newcomers)).toEqual(['n1', 'n2', 'done']); // probes go by arrival
  });

  it('SRTF: once first iterations were measured, a new job\'s probe ranks as their mean cost, not ahead of all', () => {
    const near = job('near', { itersTotal: 10, itersDone: 9, avgIterationMs: 10, firstIterationMs: 1000 }); // 10 left
    const mid = job('mid', { itersTotal: 50, itersDone: 5, avgIterationMs: 10, firstIterationMs: 2000 }); // 450 left
    const far = job('far', { itersTotal: 500, itersDone: 5, avgIterationMs: 10, firstIterationMs: 3000 }); // 4950 left
    const newbie = job('newbie', { itersTotal: 1_000 }); // its probe: mean(1000, 2000, 3000) = 2000
    expect(ids('SRTF', [far, newbie, mid, near])).toEqual(['near', 'mid', 'newbie', 'far']);
    // Its second iteration (the one that measures it) ranks so too, whatever its warm-up cost; from then on its own average.
    const warmed = { ...newbie, itersDone: 1, avgIterationMs: 5000, firstIterationMs: 5000 }; // probe: mean(1000..5000) = 2750
    expect(ids('SRTF', [far, warmed, mid, near])).toEqual(['near', 'mid', 'newbie', 'far']);
    expect(ids('SRTF', [far, { ...warmed, itersDone: 2, avgIterationMs: 10 }, mid, near])).toEqual(['near', 'mid', 'far', 'newbie']);
  });

  it('SRTF without probeFirst: unmeasured jobs use the mean of the measured ones', () => {
    const jobs = [
      job('slow', { itersTotal: 10, itersDone: 5, avgIterationMs: 100 }), // 500
      job('fast', { itersTotal: 100, itersDone: 60, avgIterationMs: 10 }), // 400
      job('new', { itersTotal: 8 }), // 8 × mean(100, 10, 1) = 296
      job('unknown', { avgIterationMs: 1 }), // no total: last, though measured and fast
    ];
    expect(ids('SRTF', jobs, 0, { probeFirst: false })).toEqual(['new', 'fast', 'slow', 'unknown']);
  });

  it('SRTF without probeFirst: with nothing measured, defaultIterationMs stands in; ties and unknown totals go by arrival', () => {
    const jobs = [job('u1'), job('t5', { itersTotal: 5 }), job('u2'), job('t5b', { itersTotal: 5 }), job('t1', { itersTotal: 1 })];
    expect(ids('SRTF', jobs, 0, { probeFirst: false })).toEqual(['t1', 't5', 't5b', 'u1', 'u2']);
    // A measured job is compared with the unmeasured ones at defaultIterationMs only when it is alone.
    const mixed = [job('m', { itersTotal: 3, avgIterationMs: 50 }), job('n', { itersTotal: 2 })];
    expect(ids('SRTF', mixed, 0, { probeFirst: false })).toEqual(['n', 'm']); // n: 2 × 50 = 100 < 150
  });

  it('FAIR: least attained first, ties by arrival', () => {
    const jobs = [job('a', { attainedMs: 30 }), job('b', { attainedMs: 10 }), job('c', { attainedMs: 10 })];
    expect(ids('FAIR', jobs)).toEqual(['b', 'c', 'a']);
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
