/**
 * Progress that adds up: an inferred iteration is a sync point after compute work
 * (a dispatch), not a readback or an upload alone, so a job's count is its steps;
 * and `done` never reads past the declared total. TF.js's trainer (its own hint
 * declares N steps; it syncs once a step and reads its weights back at the end)
 * ends at N/N.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, ROOT, startServicePerTest, type TestService } from '../helpers/service.js';

const READBACKS = join(ROOT, 'test/fixtures/jobs/readbacks.js');
const TFJS_TRAIN = join(ROOT, 'assets/jobs/tfjs-train.js');

let service: TestService | null = null;
const startService = startServicePerTest();

describe('inferred iterations', () => {
  it('count sync points after a dispatch, not readbacks, uploads or idle waits', async () => {
    service = await startService(['--memory', '256MiB']);
    const run = await service.startJob(['--name', 'readbacks', READBACKS, '--', '--steps', '6']).done;
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ done: true, value: 18, again: 18 }); // 6 steps of +3 at index 3
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'readbacks' && j.finishedAt));
    expect(job).toMatchObject({ state: 'done', iterationSource: 'inferred', iterations: { done: 6, total: null } });
  }, 60_000);

  it('a TF.js trainer of N declared steps ends at N/N, never past it on the way', async () => {
    service = await startService(['--memory', '512MiB']);
    const steps = 12;
    const job = service.startJob(['--name', 'tfjs', TFJS_TRAIN, '--', '--iterations', String(steps), '--batch', '64', '--log-every', '4']);
    const seen: number[] = [];
    let ended = false;
    void job.done.then(() => { ended = true; });
    while (!ended) {
      const info = (await service.json<any[]>(['jobs'])).find((j) => j.name === 'tfjs');
      if (info) seen.push(info.iterations.done);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const run = await job.done;
    expect(run.code, run.stderr).toBe(0);
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'tfjs' && j.finishedAt));
    expect(info.iterations).toEqual({ done: steps, total: steps });
    expect(Math.max(...seen)).toBeLessThanOrEqual(steps);
  }, 120_000);
});
