/**
 * Textures are GPU memory (issue 18): each counts its footprint (format block ×
 * texels per mip level × layers × samples) against its job in the ledger, shows
 * in `salus memory --json` as `textureBytes`, returns on destroy and when the
 * job ends; one past the job's room is an out-of-memory error as a buffer would
 * be, and one Dawn rejects holds nothing. External images (importExternalTexture,
 * copyExternalImageToTexture) throw a TypeError naming the call and saying it
 * is not supported yet.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, lastJson, startService, type TestService } from '../helpers/service.js';
import { atPhase, endsClean } from '../helpers/gatedJob.js';

const TEXTURES = join(ROOT, 'test/fixtures/jobs/textures.js');
const MiB = 1024 * 1024;
/** 64² + 32² + … + 1² texels of 4 bytes; 8³ + 4³ + 2³ + 1 texels of 4 bytes. */
const MIPPED_BYTES = 4 * (4096 + 1024 + 256 + 64 + 16 + 4 + 1);
const VOLUME_BYTES = 4 * (512 + 64 + 8 + 1);
let service: TestService | null = null;
afterEach(async () => {
  await service?.stop();
  service = null;
});


/** The calls of external images: each a TypeError that names the call and says it is not supported yet. */
function expectExternalRefused(stdout: string): void {
  const line = stdout.split('\n').find((l) => l.startsWith('{"unsupported"'));
  const unsupported = JSON.parse(line!).unsupported as Record<string, string>;
  expect(unsupported).toEqual({
    importExternalTexture: expect.stringMatching(/^TypeError: importExternalTexture is not supported yet by the Salus remote GPU/),
    copyExternalImageToTexture: expect.stringMatching(/^TypeError: queue.copyExternalImageToTexture is not supported yet by the Salus remote GPU/),
  });
}

describe('textures in the memory ledger', () => {
  it('counts each footprint against its job, gives it back on destroy and at the end, and leaves out the ones Dawn rejects', async () => {
    service = await startService(['--memory', '64MiB']);
    const gate = mkdtempSync(join(tmpdir(), 'salus-gate-'));
    const job = service.startJob(['--name', 'textures', TEXTURES, '--', '--gate', gate]);

    const created = await atPhase(service, job, gate, 'created');
    expect(created.memory.jobs[0]).toMatchObject({ persistentBytes: MIPPED_BYTES + VOLUME_BYTES, textureBytes: MIPPED_BYTES + VOLUME_BYTES, querySetBytes: 0 });
    expect(created.memory.usedBytes).toBe(created.memory.lanes.reduce((sum: number, lane: any) => sum + lane.sizeBytes, MIPPED_BYTES + VOLUME_BYTES));
    created.release();

    const destroyed = await atPhase(service, job, gate, 'destroyed');
    expect(destroyed.memory.jobs[0]).toMatchObject({ persistentBytes: VOLUME_BYTES, textureBytes: VOLUME_BYTES });
    destroyed.release();

    const invalid = await atPhase(service, job, gate, 'invalid');
    expect(invalid.facts.error).toBe('validation');
    expect(invalid.memory.jobs[0]).toMatchObject({ persistentBytes: VOLUME_BYTES, textureBytes: VOLUME_BYTES });
    invalid.release();

    const stdout = await endsClean(service, job);
    expectExternalRefused(stdout);
    expect(lastJson(stdout)).toEqual({ done: true });
  }, 60_000);

  it('is an out-of-memory error past the job\'s room, as a buffer is, and the texture it did not make cannot be used', async () => {
    service = await startService(['--memory', '1MiB']);
    const gate = mkdtempSync(join(tmpdir(), 'salus-gate-'));
    // The fill and the 256-byte copy target leave 8 bytes: room for a 2×2 r8unorm texture, not a 64×64 rgba8unorm one.
    const job = service.startJob(['--name', 'full', TEXTURES, '--', '--gate', gate, '--fill', String(MiB - 256 - 8)]);
    const full = await atPhase(service, job, gate, 'full');
    expect(full.facts).toMatchObject({ big: 'out-of-memory', use: 'validation', small: null });
    expect(full.facts.bigMessage).toMatch(/out of memory: job \S+ asked for a texture of 16 KiB/);
    expect(full.memory.jobs[0]).toMatchObject({ persistentBytes: MiB - 4, textureBytes: 4 });
    full.release();
    await endsClean(service, job);
  }, 60_000);
});
