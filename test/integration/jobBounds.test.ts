/**
 * No job can take the service down by doing many of something cheap: each test
 * runs a job that piles one kind of per-job state up on the service, checks that
 * it gets what a local device gives it, and that the service is alive and
 * serving another job afterwards.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastJson, ROOT, serviceForAllTests } from '../helpers/service.js';

const FIXTURES = join(ROOT, 'test/fixtures/jobs');
const service = serviceForAllTests(['--memory', '64MiB']);

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

  /** Runs manyCheap.js with `kind` and `count` through the service (and, with `compare`, on a local device): its results. */
  async function manyCheap(kind: string, count: number, compare = false): Promise<{ local?: any; remote: any }> {
    const args = [join(FIXTURES, 'manyCheap.js'), '--', '--kind', kind, '--count', String(count)];
    const localRun = compare ? await service.cli(['run', '--local', ...args], { timeoutMs: 60_000 }) : null;
    const run = await service.startJob(args).done;
    expect(run.code, run.stderr).toBe(0);
    const strip = ({ elapsedMs: _, ...rest }: Record<string, unknown>) => rest;
    return { local: localRun && strip(lastJson(localRun.stdout)), remote: strip(lastJson(run.stdout)) };
  }

  it('100,000 setLabel calls on one object, and labels of 100,000 characters: as on a local device', async () => {
    const labels = await manyCheap('labels', 100_000, true);
    expect(labels.remote).toEqual(labels.local);
    expect(labels.remote).toMatchObject({ label: 'label 99999', scope: null, uncaptured: 0 });
    // The service is sent the start of a long label (the wire takes 1 KiB); the job keeps all of it, without errors.
    const long = await manyCheap('longLabels', 100_000, true);
    expect(long.remote).toEqual(long.local);
    expect(long.remote).toMatchObject({ label: 100_001, encoderLabel: 100_000, scope: null, uncaptured: 0 });
    await serviceStillServes();
  }, 60_000);

  it('20,000 tiny buffers live at once, and 20,000 created and destroyed: every one made, as locally', async () => {
    // Each costs the shared device ~8 KB that Dawn on SwiftShader keeps after destroy (a local dawn.node device too).
    for (const kind of ['tinyBuffers', 'createDestroy']) {
      expect((await manyCheap(kind, 20_000)).remote).toMatchObject({ made: 20_000, scope: null, uncaptured: 0 });
    }
    await serviceStillServes();
  }, 60_000);

  it('20,000 pending mapAsync calls and 20,000 getCompilationInfo calls at once: each answered', async () => {
    expect((await manyCheap('pendingMaps', 20_000)).remote).toMatchObject({ mapped: 20_000, scope: null, uncaptured: 0 });
    expect((await manyCheap('compilationInfo', 20_000)).remote).toMatchObject({ answered: 20_000, scope: null, uncaptured: 0 });
    await serviceStillServes();
  }, 60_000);
});
