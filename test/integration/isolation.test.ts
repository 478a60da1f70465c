/**
 * A job never sees another job's bytes (issue 9): a lane lends the same real
 * buffers to one job after another, and a pooled buffer is larger than what
 * the job asked for. The next holder must get it zeroed as a whole, and every
 * access — dynamic offsets included — is bounded by the job's own size, with
 * the validation error a local device gives past it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, ROOT, startServicePerTest, type TestService } from '../helpers/service.js';
import { until } from '../helpers/rawSocket.js';

const FIXTURE = join(ROOT, 'test/fixtures/jobs/poolNeighbour.js');
let service: TestService | null = null;
const startService = startServicePerTest();

describe('a lane shared one job after another', () => {
  it('gives the next job none of the last one\'s bytes, even through a dynamic offset past its size', async () => {
    service = await startService(['--memory', '128MiB']);
    const go = join(service.dir, 'snooped');
    const filler = service.startJob(['--name', 'filler', '--iterations', '3', FIXTURE, '--', '--fill', '--iterations', '3', '--until', go]);
    await until(() => filler.stdout().includes('"filled"'), 'the filler to fill its buffers', 30_000);
    const [pool] = (await service.json<any>(['memory'])).lanes;
    expect(pool.pooledBytes).toBeGreaterThanOrEqual(4 * 1024); // its four 1 KiB buffers wait, full of 0xAB

    const local = lastJson((await service.cli(['run', '--local', FIXTURE, '--', '--snoop'])).stdout);
    const remoteRun = await service.cli(['run', '--name', 'snooper', FIXTURE, '--', '--snoop']);
    writeFileSync(go, '');
    expect(remoteRun.code, remoteRun.stderr).toBe(0);
    const remote = lastJson(remoteRun.stdout);

    // Same lane, and its buffers came from the filler's pool (the lane did not grow for them).
    expect(service.log()).toMatch(/job-1 admitted to lane-1/);
    expect(service.log()).toMatch(/job-2 admitted to lane-1/);
    expect(local.errors).toEqual(Array.from({ length: 3 }, () => [{ offset: 512, error: null }, { offset: 768, error: 'GPUValidationError' }]).flat());
    expect(remote.errors).toEqual(local.errors);
    expect(remote.nonzeroWords).toBe(0);
    expect(remote.seen.every((word: number) => word === 0)).toBe(true);
    expect((await filler.done).code).toBe(0);
  }, 90_000);
});
