/**
 * The service dies under its jobs (a crash, `kill -9`): each job's
 * `device.lost` resolves with a reason that says so, its pending GPU calls
 * fail instead of hanging, and `salus run` exits non-zero with that reason.
 * (Restarting the service is its supervisor's part: electron/serviceSupervisor.ts
 * and its tests, or systemd's Restart=on-failure.)
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, startServicePerTest, type TestService } from '../helpers/service.js';

let service: TestService | null = null;
const startService = startServicePerTest();

describe('when the service dies', () => {
  it("every job hears it through device.lost with a reason, and exits instead of hanging", async () => {
    service = await startService(['--memory', '64MiB', '--policy', 'PACK']);
    const jobs = [0, 1].map((i) => service!.startJob(['--name', `orphan-${i}`, join(ROOT, 'test/fixtures/jobs/watchesLost.js')]));
    // Their loops copy and read back with no compute, so they run no iterations (README: inferred iterations), only GPU work.
    await service.waitForJobs((list) => list.filter((j) => j.state === 'running' && j.attainedMs > 0).length === 2 && list);
    await service.stop({ keepDir: true, signal: 'SIGKILL' });
    for (const job of jobs) {
      const result = await job.done;
      expect(result.code).not.toBe(0);
      const lost = result.stdout.split('\n').filter((line) => line.startsWith('{"lost"')).map((line) => JSON.parse(line));
      expect(lost).toEqual([{ lost: 'unknown', message: expect.stringMatching(/service/i) }]);
    }
  });
});
