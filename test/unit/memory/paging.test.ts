/**
 * Paging on a real device (SwiftShader here): a persistent buffer's contents go
 * to host memory and come back byte for byte in a new buffer, the ledger exact
 * at each step (resident, paged out, used), staging counted as the job's and
 * gone after; a job released mid-page leaves nothing behind; a page-in without
 * room is an out-of-memory answer and the buffer stays paged out.
 */
import { describe, expect, test } from 'vitest';
import { PAGE_CHUNK_BYTES } from '../../../core/memory/paging.js';
import { MAP_READ_COPY_DST, MiB, STORAGE_COPY, leaseOf as ok, readBufferBytes } from './helpers.js';
import { useRealDeviceManager } from './realDevice.js';

const harness = useRealDeviceManager('paging tests');
const makeManager = (capacityBytes = 64 * MiB) => harness.makeManager(capacityBytes);

/** A pattern no two offsets of a 4-byte word share, seeded so two buffers differ. */
function pattern(sizeBytes: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(sizeBytes);
  for (let i = 0; i < sizeBytes; i++) bytes[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return bytes;
}

/** Whether two byte arrays are equal (expect's deep equality takes seconds on megabytes). */
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

const readBytes = (buffer: GPUBuffer, sizeBytes: number) => readBufferBytes(harness.device, buffer, sizeBytes);

describe('paging a persistent buffer out and back', () => {
  test('the contents come back byte for byte in a new buffer, and the ledger follows each step', async () => {
    const manager = makeManager();
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const sizeBytes = 2 * PAGE_CHUNK_BYTES + 4096; // three staging rounds
    const lease = ok(manager.allocate('a', { size: sizeBytes, usage: STORAGE_COPY }));
    const other = ok(manager.allocate('a', { size: 4096, usage: STORAGE_COPY }));
    const contents = pattern(sizeBytes, 1);
    harness.device.queue.writeBuffer(lease.buffer, 0, contents);
    const before = manager.snapshot().usedBytes;
    const old = lease.buffer;

    const out = await manager.pageOut(lease);
    expect(out).toEqual({ ok: true });
    expect(lease.residency).toBe('paged-out');
    expect(harness.allocator.destroyed.has(old)).toBe(true);
    expect(manager.residency('a')).toMatchObject({ residentBytes: 4096, pagedOutBytes: sizeBytes });
    expect(manager.usage('a').persistentBytes).toBe(4096);
    expect(manager.snapshot().usedBytes).toBe(before - sizeBytes);
    expect(manager.liveBuffers()).toEqual({ count: 1, bytes: 4096 });
    // Three staging buffers, each gone once read.
    expect(harness.allocator.created.filter((b) => b.label.includes('page-out staging'))).toHaveLength(3);
    expect(harness.allocator.live()).toEqual([other.buffer]);
    expect(await manager.pageOut(lease)).toEqual({ ok: false, message: 'cannot page out: the buffer is paged-out' });

    expect(manager.pageIn(lease)).toEqual({ ok: true });
    expect(lease.residency).toBe('resident');
    expect(lease.buffer).not.toBe(old);
    expect(manager.residency('a')).toMatchObject({ residentBytes: sizeBytes + 4096, pagedOutBytes: 0 });
    expect(manager.snapshot().usedBytes).toBe(before);
    expect(sameBytes(await readBytes(lease.buffer, sizeBytes), contents)).toBe(true);
    expect(manager.pageIn(lease)).toEqual({ ok: false, message: 'cannot page in: the buffer is not paged out' });
  });

  test('freeing a paged-out buffer drops its host copy and its paged bytes', async () => {
    const manager = makeManager();
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const lease = ok(manager.allocate('a', { size: 8192, usage: STORAGE_COPY }));
    expect((await manager.pageOut(lease)).ok).toBe(true);
    expect(manager.residency('a').pagedOutBytes).toBe(8192);
    manager.free(lease);
    expect(manager.residency('a')).toMatchObject({ residentBytes: 0, pagedOutBytes: 0 });
    expect(manager.pageIn(lease).ok).toBe(false);
  });

  test('a job released mid-page leaves no buffer, no staging and no paged bytes', async () => {
    const manager = makeManager();
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const lease = ok(manager.allocate('a', { size: 3 * PAGE_CHUNK_BYTES, usage: STORAGE_COPY }));
    const paging = manager.pageOut(lease);
    expect(lease.residency).toBe('paging-out');
    manager.release('a'); // while the first staging copy is in flight
    const result = await paging;
    expect(result.ok).toBe(false);
    expect(manager.residency('a')).toMatchObject({ residentBytes: 0, pagedOutBytes: 0 });
    expect(manager.liveBuffers()).toEqual({ count: 0, bytes: 0 });
    expect(harness.allocator.live()).toEqual([]);
    expect(manager.snapshot().usedBytes).toBe(0);
  });

  test('a page-in without room is an out-of-memory answer; it stays paged out until room frees', async () => {
    const manager = makeManager(4 * MiB);
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    manager.admit({ jobId: 'b' }, { maxLanes: 1 });
    const lease = ok(manager.allocate('a', { size: 2 * MiB, usage: STORAGE_COPY }));
    harness.device.queue.writeBuffer(lease.buffer, 0, pattern(2 * MiB, 2));
    expect((await manager.pageOut(lease)).ok).toBe(true);
    // Another job takes the room the paged-out buffer left.
    const taker = ok(manager.allocate('b', { size: 3 * MiB, usage: STORAGE_COPY }));
    const refused = manager.pageIn(lease);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toMatch(/^out of memory: job a asked for 2097152 bytes to page a buffer back in/);
    expect(lease.residency).toBe('paged-out');
    expect(manager.residency('a')).toMatchObject({ residentBytes: 0, pagedOutBytes: 2 * MiB });
    expect(manager.snapshot().usedBytes).toBeLessThanOrEqual(4 * MiB);

    manager.free(taker);
    expect(manager.pageIn(lease)).toEqual({ ok: true });
    expect(sameBytes(await readBytes(lease.buffer, 2 * MiB), pattern(2 * MiB, 2))).toBe(true);
  });

  test('staging needs room too: a full GPU refuses the page-out and leaves the buffer as it was', async () => {
    const manager = makeManager(2 * MiB);
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const lease = ok(manager.allocate('a', { size: 2 * MiB, usage: STORAGE_COPY }));
    const result = await manager.pageOut(lease);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(/staging buffer to page out/);
    expect(lease.residency).toBe('resident');
    expect(manager.residency('a')).toMatchObject({ residentBytes: 2 * MiB, pagedOutBytes: 0 });
    expect(manager.snapshot().usedBytes).toBe(2 * MiB);
  });

  test('buffers that cannot be copied out and back do not page', async () => {
    const manager = makeManager();
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const readback = ok(manager.allocate('a', { size: 256, usage: MAP_READ_COPY_DST }));
    expect(await manager.pageOut(readback)).toEqual({ ok: false, message: 'cannot page out: the buffer has no COPY_SRC and COPY_DST usage, so it cannot be copied out and back' });
  });
});
