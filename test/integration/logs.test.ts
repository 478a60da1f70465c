/**
 * `salus logs ID [--follow]` against a real service and a real job: following
 * prints what was there and what comes, and ends with the job; afterwards the
 * same output is still there; an unknown id says so.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, SALUS_BIN, startServicePerTest, type TestService } from '../helpers/service.js';

const WGSL = join(ROOT, 'assets/jobs/wgsl-train.js');
let service: TestService | null = null;
const startService = startServicePerTest();

describe('salus logs', () => {
  it('follows a running job to its end, then shows the same output after the fact', async () => {
    service = await startService(['--memory', '256MiB']);
    const job = service.startJob(['--name', 'logged', WGSL, '--', '--iterations', '200', '--log-every', '20']);
    const { id } = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'logged' && j.iterations.done >= 2));

    const follow = spawn(process.execPath, [SALUS_BIN, 'logs', id, '--follow', '--socket', service.socketPath], { stdio: ['ignore', 'pipe', 'pipe'] });
    let followed = '';
    follow.stdout.on('data', (chunk: Buffer) => { followed += chunk.toString(); });
    const followCode = new Promise<number | null>((resolve) => follow.on('close', resolve));
    const ran = await job.done;
    expect(ran.code, ran.stderr).toBe(0);
    // It ends by itself once the job has ended.
    expect(await followCode).toBe(0);

    const steps = [...followed.matchAll(/"step":(\d+)/g)].map((m) => Number(m[1]));
    // Every line once, in order: what was there before following began, then what came.
    expect(steps).toEqual([0, 20, 40, 60, 80, 100, 120, 140, 160, 180, 199]);
    expect(followed).toContain('"final"');
    expect(followed).toBe(ran.stdout);

    const after = await service.cli(['logs', id]);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe(followed);
  });

  it('says which id it does not know', async () => {
    service = await startService();
    const result = await service.cli(['logs', 'job-404']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/job-404/);
  });
});
