/**
 * The service measures what each iteration of a real job touches and which of
 * those buffers it needed from before (live-in) or provably overwrote whole
 * first, and reports it per job in `salus jobs --json` and `salus memory --json`.
 * accessKinds.js gives each way of use its own buffer size, so the sums name them.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, serviceForAllTests } from '../helpers/service.js';

const FIXTURES = join(ROOT, 'test/fixtures/jobs');
const KiB = 1024;
// Pooled sizes are exact here: every buffer is created outside an iteration, so none is rounded up.
const LIVE_IN = 4 * KiB + 16 * KiB + 512; // weights, partial, result
const WRITTEN_FIRST = 8 * KiB + 64 * KiB + 256; // input, cleared, readback
const UNREAD = 32 * KiB; // sink
const service = serviceForAllTests(['--memory', '64MiB']);

describe('working sets of iterations', () => {
  it('tells live-in buffers from written-first ones, and reports them while the job runs and after', async () => {
    const job = service.startJob(['--name', 'kinds', join(FIXTURES, 'accessKinds.js'), '--', '--iterations', '30', '--pause-ms', '40']);
    let entry: any;
    for (let tries = 0; !entry && tries < 200; tries++) {
      const memory = await service.json<any>(['memory']);
      entry = memory.jobs.find((j: any) => j.workingSetBytes > 0);
    }
    expect(entry).toMatchObject({ workingSetBytes: LIVE_IN + WRITTEN_FIRST + UNREAD, liveInBytes: LIVE_IN, writtenFirstBytes: WRITTEN_FIRST, pagedOutBytes: 0 });
    expect(entry.residentBytes).toBe(entry.persistentBytes);
    expect(entry.residentBytes).toBe(LIVE_IN + WRITTEN_FIRST + UNREAD);

    const run = await job.done;
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('uncaptured');
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'kinds' && j.finishedAt));
    expect(info.state).toBe('done');
    // The last iteration's figures stay as a record; an ended job holds nothing.
    expect(info.memory).toMatchObject({ workingSetBytes: LIVE_IN + WRITTEN_FIRST + UNREAD, liveInBytes: LIVE_IN, writtenFirstBytes: WRITTEN_FIRST, residentBytes: 0, pagedOutBytes: 0 });
  }, 60_000);

  it('counts buffers created inside an iteration as neither, and inferred iterations the same way', async () => {
    // steps.js: weights (1 MiB) and result (16 B) are read first, readback (16 B) is a whole copy's destination,
    // the per-iteration scratch buffer is created inside the iteration (pooled: 256 KiB is its own size class).
    const run = await service.startJob(['--name', 'steps', join(FIXTURES, 'steps.js'), '--', '--iterations', '4', '--persistent', '1048576', '--ephemeral', '262144', '--work', '2']).done;
    expect(run.code).toBe(0);
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'steps' && j.finishedAt));
    expect(info.iterationSource).toBe('inferred');
    expect(info.memory).toMatchObject({ liveInBytes: 1048576 + 16, writtenFirstBytes: 16, workingSetBytes: 1048576 + 16 + 16 + 262144 });
  }, 60_000);

  it('counts texture copies and render passes: their source and vertex buffers are read, a copy destination only touched', async () => {
    const run = await service.startJob(['--name', 'drawn', join(FIXTURES, 'accessKinds.js'), '--', '--iterations', '4', '--textures']).done;
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('uncaptured');
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'drawn' && j.finishedAt));
    // vertices (2 KiB) and texels (1 KiB) are live-in; texout (768 B) is neither.
    expect(info.memory).toMatchObject({
      workingSetBytes: LIVE_IN + WRITTEN_FIRST + UNREAD + 2048 + 1024 + 768, liveInBytes: LIVE_IN + 2048 + 1024, writtenFirstBytes: WRITTEN_FIRST,
    });
  }, 60_000);

  it('trusts no write of an iteration that raised a GPU error: every buffer it touched counts as live-in', async () => {
    const run = await service.startJob(['--name', 'bad', join(FIXTURES, 'accessKinds.js'), '--', '--iterations', '4', '--bad']).done;
    expect(run.code).toBe(0);
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'bad' && j.finishedAt));
    expect(info.gpuErrors.count).toBeGreaterThan(0);
    expect(info.memory).toMatchObject({ workingSetBytes: LIVE_IN + WRITTEN_FIRST + UNREAD, liveInBytes: LIVE_IN + WRITTEN_FIRST + UNREAD, writtenFirstBytes: 0 });
  }, 60_000);
});
