/**
 * A job's devices are one job to the service: the memory of all of them counts
 * towards it, destroying one returns that one's memory at once and leaves the
 * other working, and the job ends `done` with nothing held.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastJson, ROOT, startService, type TestService } from '../helpers/service.js';

const JOB = join(ROOT, 'test/fixtures/jobs/twoDevices.js');
const MiB = 1024 * 1024;

let service: TestService;
let goDir: string;

beforeAll(async () => {
  service = await startService();
  goDir = mkdtempSync(join(tmpdir(), 'salus-devices-'));
});

afterAll(async () => {
  await service?.stop();
  rmSync(goDir, { recursive: true, force: true });
});

describe('many devices in one job', () => {
  it("counts every device's memory as the job's, and returns a destroyed device's at once", async () => {
    const job = service.startJob([JOB, '--name', 'two-devices', '--', '--go', goDir]);
    const both = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'two-devices' && j.memory.persistentBytes >= 3 * MiB));
    expect(both.memory.persistentBytes).toBe(3 * MiB);
    expect(both.state).toBe('running');
    const memory = await service.json<{ jobs: Array<{ id: string; persistentBytes: number }> }>(['memory']);
    expect(memory.jobs.find((j) => j.id === both.id)?.persistentBytes).toBe(3 * MiB);

    writeFileSync(join(goDir, '1'), '');
    const one = await service.waitForJobs((jobs) => jobs.find((j) => j.id === both.id && j.memory.persistentBytes === 2 * MiB));
    expect(one.state).toBe('running');

    writeFileSync(join(goDir, '2'), '');
    const result = await job.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"phase":"allocated","a":7,"b":9');
    expect(result.stdout).toContain('"lost":"destroyed"');
    expect(result.stdout).not.toContain('uncaptured');
    expect(lastJson(result.stdout)).toEqual({ final: { b: 9 } });
    const ended = await service.waitForJobs((jobs) => jobs.find((j) => j.id === both.id && j.finishedAt));
    expect(ended.state).toBe('done');
    expect(ended.memory.persistentBytes).toBe(0);
    expect(service.log()).not.toMatch(/internal error|malformed command/i);
  });
});
