/**
 * No job can take the service down by doing many of something cheap: each test
 * runs a job that piles one kind of per-job state up on the service, checks that
 * it gets what a local device gives it, and that the service is alive and
 * serving another job afterwards.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJson, ROOT, startService, type TestService } from '../helpers/service.js';

const FIXTURES = join(ROOT, 'test/fixtures/jobs');
let service: TestService;

beforeAll(async () => {
  service = await startService(['--memory', '64MiB']);
}, 30_000);

afterAll(async () => {
  await service?.stop();
});

/** A short job runs right on the service (it is still alive and serving). */
async function serviceStillServes(): Promise<void> {
  const run = await service.startJob([join(FIXTURES, 'steps.js'), '--', '--iterations', '2']).done;
  expect(run.code, run.stderr).toBe(0);
}

describe('per-job state on the service is bounded', () => {
  // The WebGPU CTS's error_scope:current_scope at stackDepth=100000 made the service run out of heap:
  // each push and pop copied the job's whole virtual stack for its segment.
  it('100,000 nested validation scopes: the innermost catches the error, as on a local device', async () => {
    const args = [join(FIXTURES, 'deepErrorScopes.js'), '--', '--depth', '100000', '--filter', 'validation'];
    const local = lastJson((await service.cli(['run', '--local', ...args], { timeoutMs: 120_000 })).stdout);
    const run = await service.startJob(args).done;
    expect(run.code, run.stderr).toBe(0);
    const expected = { innermost: 'GPUValidationError', othersWithError: 0, outer: null };
    expect(local).toMatchObject(expected);
    expect(lastJson(run.stdout)).toMatchObject(expected);
    await serviceStillServes();
  }, 180_000);

  it('100,000 nested out-of-memory scopes: the innermost catches an allocation past the service\'s memory', async () => {
    // A software GPU never runs out of memory, so there is no local run to compare with: the ledger refuses.
    const args = [join(FIXTURES, 'deepErrorScopes.js'), '--', '--depth', '100000', '--filter', 'out-of-memory', '--size', String(128 * 1024 * 1024)];
    const run = await service.startJob(args).done;
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ innermost: 'GPUOutOfMemoryError', othersWithError: 0, outer: null });
    await serviceStillServes();
  }, 180_000);
});
