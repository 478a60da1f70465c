/**
 * The iteration watchdog on a real service: a job that hangs inside an
 * iteration is failed with a message that says why and what to change, its
 * process exits, its memory returns, and the job sharing its lane runs on.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, ROOT, startServicePerTest, type TestService } from '../helpers/service.js';

const FIXTURES = join(ROOT, 'test/fixtures/jobs');
let service: TestService | null = null;
const startService = startServicePerTest();

describe('a job that hangs inside an iteration', () => {
  it('is failed by the watchdog; the other job in its lane finishes right', async () => {
    service = await startService(['--memory', '64MiB', '--policy', 'FIFO']);
    const policy = await service.cli(['policy', '--set', 'hangMinMs=1000', '--set', 'hangFactor=10', '--set', 'workConserving=on']);
    expect(policy.code, policy.stderr).toBe(0);
    const stepsArgs = [join(FIXTURES, 'steps.js'), '--', '--iterations', '12', '--work', '8'];
    const expected = lastJson((await service.cli(['run', '--local', ...stepsArgs])).stdout).checksum;

    const hung = service.startJob(['--name', 'stuck', join(FIXTURES, 'hangs.js'), '--', '--before', '3']);
    await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'stuck' && j.iterations.done >= 3));
    // Queued behind the stuck iteration in the same (only) lane.
    const other = service.startJob(['--name', 'patient', ...stepsArgs]);

    const failed = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'stuck' && j.state === 'failed'));
    expect(failed.error).toMatch(/the watchdog ended the job: an iteration ran [\d.]+ s, past its limit of 1\.0 s .*hangMinMs/);
    const stuck = await hung.done;
    expect(stuck.code).toBe(1);
    expect(stuck.stderr).toMatch(/failed: the watchdog ended the job/);

    const patient = await other.done;
    expect(patient.code, patient.stderr).toBe(0);
    expect(lastJson(patient.stdout).checksum).toBe(expected);
    const memory = await service.json<any>(['memory']);
    expect(memory.usedBytes).toBe(0);
  });
});
