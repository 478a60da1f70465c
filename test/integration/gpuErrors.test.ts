/**
 * A job that ignores its GPU errors must not read as a clean success: a real job
 * whose allocation fails (out of memory) and whose next write is invalid exits 0,
 * and the service lists it `done` with the count and the first error, in
 * `salus jobs --json` and the table, while a clean job's row says 0.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, serviceForAllTests } from '../helpers/service.js';

const FIXTURES = join(ROOT, 'test/fixtures/jobs');
const service = serviceForAllTests(['--memory', '16MiB']);

describe('uncaptured GPU errors on the job row', () => {
  it('counts them and keeps the first, for a job that exits 0', async () => {
    const run = await service.startJob(['--name', 'careless', join(FIXTURES, 'ignoresErrors.js'), '--', '--size', String(32 * 1024 * 1024)]).done;
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"finished":true');

    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'careless' && j.finishedAt));
    expect(job.state).toBe('done');
    expect(job.error).toBeNull();
    expect(job.gpuErrors.count).toBe(2);
    expect(job.gpuErrors.first.type).toBe('out-of-memory');
    expect(job.gpuErrors.first.message).toMatch(/asked for 32 MiB/);

    const table = await service.cli(['jobs']);
    const row = table.stdout.split('\n').find((line) => line.includes('careless'))!;
    expect(table.stdout.split('\n')[0]).toContain('GPU ERRORS');
    expect(row).toMatch(/done .* 2 +out-of-memory: out of memory/);
    expect(service.log()).toMatch(/first uncaptured GPU error \(out-of-memory\)/);
  }, 60_000);

  it('says 0 for a job whose work raised none', async () => {
    const run = await service.startJob(['--name', 'clean', join(FIXTURES, 'steps.js'), '--', '--iterations', '3']).done;
    expect(run.code).toBe(0);
    const job = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'clean' && j.finishedAt));
    expect(job.state).toBe('done');
    expect(job.gpuErrors).toEqual({ count: 0, first: null });
  }, 60_000);
});
