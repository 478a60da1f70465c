/**
 * Jobs that pause at phases (test/fixtures/jobs/gate.js): the test reads the
 * service's state at each phase, then lets the job go on.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { until } from './rawSocket.js';
import type { JobProcess, TestService } from './service.js';

/** Waits for the job's `phase` line, returns it and the memory map then; `release()` lets the job go on. */
export async function atPhase(service: TestService, job: JobProcess, gate: string, name: string) {
  const line = await until(() => job.stdout().split('\n').find((l) => l.startsWith(`{"phase":"${name}"`)), `the job's '${name}' phase`, 30_000);
  const memory = await service.json<any>(['memory']);
  return { facts: JSON.parse(line), memory, release: () => writeFileSync(join(gate, name), '') };
}

/** Waits for the job to exit 0 and leave the ledger empty; answers its output. */
export async function endsClean(service: TestService, job: JobProcess): Promise<string> {
  const run = await job.done;
  expect(run.code, run.stderr).toBe(0);
  await until(async () => (await service.json<any>(['memory'])).jobs.length === 0, 'the job to leave the ledger');
  expect(await service.json<any>(['memory'])).toMatchObject({ usedBytes: 0, jobs: [], lanes: [] });
  return run.stdout;
}
