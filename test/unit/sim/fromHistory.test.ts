/** A trace from the job history: what each column is made of, and what is left out. */
import { describe, expect, it } from 'vitest';
import { traceFromHistory } from '../../../core/sim/fromHistory.js';
import { parseTrace, formatTraceCsv } from '../../../core/sim/trace.js';
import type { HistoryEntry } from '../../../core/protocol/history.js';

function entry(id: string, name: string, more: Partial<HistoryEntry>): HistoryEntry {
  return {
    id, name, state: 'done', priority: 0, iterations: { done: 10, total: 10 }, memory: { persistentBytes: 4096, ephemeralPeakBytes: 8192 },
    lane: null, submittedAt: 1_000_000, startedAt: 1_000_500, finishedAt: 1_002_500, avgIterationMs: 120, attainedMs: 1000, queuedMs: 500,
    error: null, pid: 1, iterationSource: 'sdk', runId: 1, fromEarlierRun: true, lost: false,
    spec: { name, file: null, args: [], hints: {}, priority: 0 }, stateChanges: [], iterationSeries: [], ...more,
  };
}

describe('traceFromHistory', () => {
  it('makes one job per entry that ran, in order of submission, from its measured times and declared hints', () => {
    const { jobs, skipped } = traceFromHistory([
      entry('job-3', 'train', { submittedAt: 1_004_000, startedAt: 1_004_000, finishedAt: 1_004_900, iterations: { done: 4, total: 8 }, attainedMs: 400, queuedMs: 100, priority: 2, state: 'killed' }),
      entry('job-2', 'never', { iterations: { done: 0, total: 5 }, attainedMs: 0, startedAt: null, finishedAt: null, state: 'failed' }),
      entry('job-1', 'train', { spec: { name: 'train', file: null, args: [], hints: { persistentBytes: 1 << 20, ephemeralBytes: 2 << 20 }, priority: 0 } }),
    ]);
    expect(skipped).toBe(1);
    expect(jobs).toEqual([
      // Lived 2000 ms from admission: 1000 on the GPU, 500 waiting for grants, 500 between its 10 iterations.
      { name: 'train (job-1)', arrivalS: 0, iterations: 10, iterationMs: 100, persistentBytes: 1 << 20, ephemeralBytes: 2 << 20, priority: 0, gapMs: 50 },
      // No hints: what the service measured. Killed after 4 of 8: the 4 it ran.
      { name: 'train (job-3)', arrivalS: 4, iterations: 4, iterationMs: 100, persistentBytes: 4096, ephemeralBytes: 8192, priority: 2, gapMs: 100 },
    ]);
    // The CSV reads back to the same jobs.
    expect(parseTrace(formatTraceCsv(jobs, ['from a test']))).toEqual(jobs);
  });

  it('keeps the run time and share a job declared', () => {
    const [job] = traceFromHistory([entry('job-1', 'declared', { spec: { name: 'declared', file: null, args: [], hints: { durationMs: 1200, share: 3 }, priority: 0 } })]).jobs;
    expect(job).toMatchObject({ durationMs: 1200, share: 3 });
    expect(parseTrace(formatTraceCsv([job]))).toEqual([job]);
  });

  it('keeps a unique name as it is and answers nothing for a history with no iterations', () => {
    expect(traceFromHistory([entry('job-1', 'solo', {})]).jobs[0].name).toBe('solo');
    expect(traceFromHistory([entry('job-1', 'idle', { iterations: { done: 0, total: null } })])).toEqual({ jobs: [], skipped: 1 });
  });
});
