/**
 * Properties of the policies on random small traces (fast-check), against what each
 * policy promises: SRTF with declared lengths reaches the exact optimum when jobs
 * arrive together (shortest processing time first, Smith's rule); FIFO runs jobs in
 * arrival order, each from the later of its arrival and the previous job's end; FAIR
 * keeps every job's GPU time per unit of share within one iteration of the others'.
 * The simulator drives the service's own scheduler, so these hold for it as well.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createScheduler } from '../../../core/scheduler/scheduler.js';
import { createVirtualClock } from '../../../core/sim/virtualClock.js';
import { simulate } from '../../../core/sim/simulator.js';
import type { TraceJob } from '../../../core/sim/trace.js';
import { PROBE_MIN_ITERATIONS } from '../../../core/scheduler/policies/srtf.js';
import { shortestFirstAvgJctMs } from './optimum.js';

const RUNS = { numRuns: 200, seed: 21 };

function traceJob(index: number, fields: Partial<TraceJob> & Pick<TraceJob, 'iterations' | 'iterationMs'>): TraceJob {
  return { name: `j${index}`, arrivalS: 0, persistentBytes: 0, ephemeralBytes: 0, priority: 0, gapMs: 0, ...fields };
}

const lengthMs = (job: TraceJob) => job.iterations * job.iterationMs;

describe('SRTF against the optimum, jobs arriving together', () => {
  it('declaring their run times: exactly shortest processing time first, whatever their iteration times', () => {
    const jobs = fc.array(fc.record({ iterations: fc.integer({ min: 1, max: 60 }), iterationMs: fc.integer({ min: 1, max: 400 }) }), { minLength: 1, maxLength: 8 });
    fc.assert(fc.property(jobs, (specs) => {
      const trace = specs.map((spec, i) => traceJob(i, { ...spec, durationMs: spec.iterations * spec.iterationMs }));
      const result = simulate(trace, { policy: 'SRTF' });
      expect(result.avgJctMs).toBeCloseTo(shortestFirstAvgJctMs(trace.map(lengthMs)), 6);
    }), RUNS);
  });

  it(`declaring only iterations (fewer than ${PROBE_MIN_ITERATIONS}) of equal length: exactly the optimum`, () => {
    const input = fc.record({
      iterationMs: fc.integer({ min: 1, max: 1000 }),
      counts: fc.array(fc.integer({ min: 1, max: PROBE_MIN_ITERATIONS - 1 }), { minLength: 1, maxLength: 10 }),
    });
    fc.assert(fc.property(input, ({ iterationMs, counts }) => {
      const trace = counts.map((iterations, i) => traceJob(i, { iterations, iterationMs }));
      expect(simulate(trace, { policy: 'SRTF' }).avgJctMs).toBeCloseTo(shortestFirstAvgJctMs(trace.map(lengthMs)), 6);
    }), RUNS);
  });
});

describe('FIFO against arrival order', () => {
  it('each job runs whole, in order of arrival (file order on ties), from the later of its arrival and the previous end', () => {
    const jobs = fc.array(fc.record({
      arrivalMs: fc.integer({ min: 0, max: 5000 }), iterations: fc.integer({ min: 1, max: 20 }), iterationMs: fc.integer({ min: 1, max: 300 }),
    }), { minLength: 1, maxLength: 8 });
    fc.assert(fc.property(jobs, (specs) => {
      const trace = specs.map(({ arrivalMs, ...spec }, i) => traceJob(i, { ...spec, arrivalS: arrivalMs / 1000 }));
      const result = simulate(trace, { policy: 'FIFO' });
      const order = trace.map((_, i) => i).sort((a, b) => trace[a].arrivalS - trace[b].arrivalS || a - b);
      let endMs = 0;
      for (const i of order) {
        endMs = Math.max(endMs, specs[i].arrivalMs) + lengthMs(trace[i]);
        expect(result.jobs[i].finishMs).toBeCloseTo(endMs, 6);
      }
    }), RUNS);
  });
});

describe('FAIR against shares', () => {
  it('keeps GPU time per unit of share within one iteration across jobs that always ask', () => {
    const jobs = fc.array(fc.record({ iterationMs: fc.integer({ min: 1, max: 200 }), share: fc.integer({ min: 1, max: 5 }) }), { minLength: 2, maxLength: 5 });
    fc.assert(fc.property(jobs, fc.integer({ min: 20, max: 200 }), (specs, grants) => {
      const clock = createVirtualClock();
      const scheduler = createScheduler({ clock, policy: 'FAIR' });
      const attainedMs = specs.map(() => 0);
      // One iteration of the job whose time per share grows most at once: the most FAIR may let them drift apart.
      const slackMs = Math.max(...specs.map((spec) => spec.iterationMs / spec.share));
      const perShare = () => attainedMs.map((ms, i) => ms / specs[i].share);
      scheduler.onDidChange((change) => {
        if (change.type !== 'grant') return;
        const i = Number(change.jobId);
        clock.setTimeout(() => {
          scheduler.finishIteration(change.jobId, specs[i].iterationMs);
          attainedMs[i] += specs[i].iterationMs;
          const spread = Math.max(...perShare()) - Math.min(...perShare());
          expect(spread).toBeLessThanOrEqual(slackMs + 1e-9);
          void scheduler.requestIteration(change.jobId);
        }, specs[i].iterationMs);
      });
      specs.forEach((spec, i) => scheduler.addJob({ id: String(i), laneId: 'L', share: spec.share }));
      specs.forEach((_, i) => void scheduler.requestIteration(String(i)));
      for (let n = 0; n < grants && clock.runNext(); n++);
      // And over the run, each job's part of the GPU time is its part of the shares, to within that iteration.
      const totalMs = attainedMs.reduce((a, b) => a + b, 0);
      const totalShares = specs.reduce((a, spec) => a + spec.share, 0);
      specs.forEach((spec, i) => expect(Math.abs(attainedMs[i] - (totalMs * spec.share) / totalShares)).toBeLessThanOrEqual(spec.share * slackMs + 1e-9));
      scheduler.dispose();
    }), RUNS);
  });
});
