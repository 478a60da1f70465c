// Each live job's part of the GPU time the live jobs received, as `salus jobs` shows it.
import { describe, expect, it } from 'vitest';
import type { JobInfo, JobState } from '../../../core/protocol/state.js';
import { withAttainedFractions } from '../../../core/scheduler/attained.js';

const row = (id: string, state: JobState, attainedMs: number) => ({ id, state, attainedMs }) as JobInfo;

describe('withAttainedFractions', () => {
  it('divides the live jobs\' GPU time among them; ended jobs have none', () => {
    const rows = withAttainedFractions([row('a', 'running', 300), row('b', 'paused', 100), row('c', 'done', 5000), row('d', 'queued', 0)]);
    expect(rows.map((r) => r.attainedFraction)).toEqual([0.75, 0.25, null, 0]);
  });

  it('says nothing while no live job has received any time', () => {
    expect(withAttainedFractions([row('a', 'queued', 0), row('b', 'failed', 10)]).map((r) => r.attainedFraction)).toEqual([null, null]);
  });
});
