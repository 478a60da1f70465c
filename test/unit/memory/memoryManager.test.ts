/**
 * The memory manager on a real shared device (SwiftShader here): pooled reuse,
 * zeroing between holders, survivors, out-of-memory isolation and full release.
 */
import { describe, expect, test } from 'vitest';
import type { AllocResult, BufferLease, MemoryManager } from '../../../core/memory/memoryManager.js';
import { MAP_READ_COPY_DST, MiB, STORAGE_COPY, readBufferBytes } from './helpers.js';
import { useRealDeviceManager } from './realDevice.js';

const harness = useRealDeviceManager('memory manager tests');
let manager: MemoryManager;

function makeManager(capacityBytes = 256 * MiB): MemoryManager {
  manager = harness.makeManager(capacityBytes);
  return manager;
}

function ok(result: AllocResult): BufferLease {
  if (!result.ok) throw new Error(`expected an allocation, got: ${result.message}`);
  return result.lease;
}

function readBytes(buffer: GPUBuffer, sizeBytes: number): Promise<Uint8Array> {
  return readBufferBytes(harness.device, buffer, sizeBytes);
}

function checkInvariant(): void {
  const map = manager.snapshot();
  const persistent = map.jobs.reduce((sum, job) => sum + job.persistentBytes, 0);
  const lanes = map.lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
  expect(map.usedBytes).toBe(persistent + lanes);
  expect(map.freeBytes).toBe(map.capacityBytes - map.usedBytes);
  for (const lane of map.lanes) expect(lane.pooledBytes).toBeLessThanOrEqual(lane.sizeBytes);
}

describe('lane pools', () => {
  test('a freed buffer is reused only after the iteration ends, and reads back as zeros for the next job', async () => {
    makeManager();
    manager.admit({ jobId: 'a', ephemeralBytes: MiB }, { maxLanes: 1 });
    manager.admit({ jobId: 'b', ephemeralBytes: MiB }, { maxLanes: 1 });

    manager.beginIteration('a');
    expect(manager.snapshot().lanes[0].running).toBe('a');
    const first = ok(manager.allocate('a', { size: 1000, usage: STORAGE_COPY, label: 'activations' }));
    expect(first).toMatchObject({ jobId: 'a', sizeBytes: 1000, realSizeBytes: 1024, pooled: true, kind: 'ephemeral', laneId: 'lane-1' });
    // The whole real buffer, past the 1000 bytes asked for: the next holder must see none of it.
    harness.device.queue.writeBuffer(first.buffer, 0, new Uint8Array(1024).fill(0xab));
    expect((await readBytes(first.buffer, 1000)).every((byte) => byte === 0xab)).toBe(true);
    manager.free(first);
    expect(harness.allocator.destroyed.has(first.buffer)).toBe(false); // pooled, not destroyed
    // Same size class, same iteration: a fresh buffer, never the freed one.
    const second = ok(manager.allocate('a', { size: 900, usage: STORAGE_COPY }));
    expect(second.buffer).not.toBe(first.buffer);
    manager.free(second);
    manager.endIteration('a');
    expect(manager.snapshot().lanes[0]).toMatchObject({ running: null, pooledBytes: 2048 });
    expect(manager.usage('a').ephemeralPeakBytes).toBe(2048);

    manager.beginIteration('b');
    const created = harness.allocator.created.length;
    const reused = ok(manager.allocate('b', { size: 1000, usage: STORAGE_COPY }));
    expect(harness.allocator.created.length).toBe(created);
    expect([first.buffer, second.buffer]).toContain(reused.buffer);
    expect(reused).toMatchObject({ jobId: 'b', sizeBytes: 1000, realSizeBytes: 1024 });
    expect(harness.allocator.clears.at(-1)).toEqual({ buffer: reused.buffer, sizeBytes: 1024 });
    const bytes = await readBytes(reused.buffer, 1024);
    expect(bytes.every((byte) => byte === 0)).toBe(true);
    // Another usage is another bucket: a new buffer.
    const other = ok(manager.allocate('b', { size: 1000, usage: STORAGE_COPY | 0x0040 }));
    expect([first.buffer, second.buffer]).not.toContain(other.buffer);
    manager.free(reused);
    manager.free(other);
    manager.endIteration('b');
    checkInvariant();
  });

  test('a discarded buffer coming back (ownBytes) keeps its own job\'s bytes, never another job\'s', async () => {
    makeManager();
    manager.admit({ jobId: 'a', ephemeralBytes: MiB }, { maxLanes: 1 });
    manager.admit({ jobId: 'b', ephemeralBytes: MiB }, { maxLanes: 1 });
    manager.beginIteration('a');
    const first = ok(manager.allocate('a', { size: 1024, usage: STORAGE_COPY, label: 'pooled' }));
    harness.device.queue.writeBuffer(first.buffer, 0, new Uint8Array(1024).fill(0xcd));
    manager.free(first);
    manager.endIteration('a');

    // The same job takes it back as a discarded buffer: no clear, its bytes as it left them.
    manager.beginIteration('a');
    let clears = harness.allocator.clears.length;
    const own = ok(manager.allocate('a', { size: 1024, usage: STORAGE_COPY, label: 'pooled' }, { ownBytes: true }));
    expect(own.buffer).toBe(first.buffer);
    expect(harness.allocator.clears.length).toBe(clears);
    expect((await readBytes(own.buffer, 1024)).every((byte) => byte === 0xcd)).toBe(true);
    manager.free(own);
    manager.endIteration('a');

    // Another job asking the same way gets it zeroed.
    manager.beginIteration('b');
    clears = harness.allocator.clears.length;
    const theirs = ok(manager.allocate('b', { size: 1024, usage: STORAGE_COPY }, { ownBytes: true }));
    expect(theirs.buffer).toBe(first.buffer);
    expect(harness.allocator.clears.length).toBe(clears + 1);
    expect((await readBytes(theirs.buffer, 1024)).every((byte) => byte === 0)).toBe(true);
    manager.free(theirs);
    manager.endIteration('b');

    // A plain createBuffer by the job that held it last is zeroed too: WebGPU's new buffers are.
    manager.beginIteration('b');
    clears = harness.allocator.clears.length;
    const fresh = ok(manager.allocate('b', { size: 1024, usage: STORAGE_COPY }));
    expect(fresh.buffer).toBe(first.buffer);
    expect(harness.allocator.clears.length).toBe(clears + 1);
    manager.free(fresh);
    manager.endIteration('b');
    checkInvariant();
  });

  test('a buffer freed in the running iteration can be taken back, the same one, until the iteration ends', () => {
    makeManager();
    manager.admit({ jobId: 'a', ephemeralBytes: MiB }, { maxLanes: 1 });
    manager.beginIteration('a');
    const lease = ok(manager.allocate('a', { size: 1024, usage: STORAGE_COPY }));
    expect(manager.canTakeBack(lease)).toBe(false); // not freed
    expect(manager.takeBack(lease)).toBe(false);
    manager.free(lease);
    expect(manager.canTakeBack(lease)).toBe(true);
    const lentBefore = manager.snapshot().lanes[0];
    expect(manager.takeBack(lease)).toBe(true);
    expect(manager.takeBack(lease)).toBe(false); // held again
    expect(manager.snapshot().lanes[0]).toEqual(lentBefore);
    // Held again, it is not returned to the pool at the end: it outlived the iteration, so it is the job's state.
    manager.endIteration('a');
    expect(harness.allocator.destroyed.has(lease.buffer)).toBe(false);
    expect(manager.usage('a').persistentBytes).toBe(1024);
    // Freed in a later iteration and not taken back, it goes to the pool at that iteration's end; then it is gone.
    manager.beginIteration('a');
    const scratch = ok(manager.allocate('a', { size: 2048, usage: STORAGE_COPY }));
    manager.free(scratch);
    manager.endIteration('a');
    expect(manager.canTakeBack(scratch)).toBe(false);
    expect(manager.takeBack(scratch)).toBe(false);
    checkInvariant();
  });

  test('buffers still alive at the iteration end become persistent and leave the pool and the lane', () => {
    makeManager();
    manager.admit({ jobId: 'a', persistentBytes: 0, ephemeralBytes: 4 * MiB }, { maxLanes: 1 });
    manager.beginIteration('a');
    const scratch = ok(manager.allocate('a', { size: MiB, usage: STORAGE_COPY }));
    const weights = ok(manager.allocate('a', { size: 3000, usage: STORAGE_COPY, label: 'lazy weights' }));
    const staging = ok(manager.allocate('a', { size: 4096, usage: MAP_READ_COPY_DST }));
    expect(staging.pooled).toBe(false);
    manager.free(scratch);
    manager.endIteration('a');

    expect(weights).toMatchObject({ kind: 'persistent', laneId: null });
    expect(staging).toMatchObject({ kind: 'persistent', laneId: null });
    expect(manager.usage('a')).toEqual({ persistentBytes: 3072 + 4096, ephemeralPeakBytes: MiB });
    const map = manager.snapshot();
    expect(map.jobs).toEqual([{ id: 'a', persistentBytes: 3072 + 4096, reservedPersistentBytes: 3072 + 4096, querySetBytes: 0, textureBytes: 0, lane: 'lane-1' }]);
    expect(map.lanes[0].pooledBytes).toBe(MiB); // the scratch buffer, idle
    checkInvariant();

    // The survivor is not lent again while the job holds it; freed in an iteration, it goes back to the lane
    // (not destroyed), and the pool lends it again from the iteration's end.
    manager.beginIteration('a');
    const next = ok(manager.allocate('a', { size: 3000, usage: STORAGE_COPY }));
    expect(next.buffer).not.toBe(weights.buffer);
    manager.free(weights);
    expect(harness.allocator.destroyed.has(weights.buffer)).toBe(false);
    manager.free(weights); // idempotent
    manager.free(next);
    manager.endIteration('a');
    expect(manager.usage('a').persistentBytes).toBe(4096);
    expect(manager.snapshot().lanes[0].pooledBytes).toBe(MiB + 2 * 3072);
    checkInvariant();
    manager.beginIteration('a');
    const created = harness.allocator.created.length;
    const [one, two] = [0, 1].map(() => ok(manager.allocate('a', { size: 3000, usage: STORAGE_COPY })));
    expect(harness.allocator.created.length).toBe(created);
    expect([one.buffer, two.buffer]).toContain(weights.buffer);
    manager.free(one);
    manager.free(two);
    manager.endIteration('a');
  });

  test('an unpooled ephemeral buffer counts in the lane and is destroyed when freed', () => {
    makeManager();
    manager.admit({ jobId: 'a', ephemeralBytes: 64 * 1024 }, { maxLanes: 1 });
    manager.beginIteration('a');
    const staging = ok(manager.allocate('a', { size: 10_000, usage: MAP_READ_COPY_DST }));
    const mapped = ok(manager.allocate('a', { size: 4096, usage: STORAGE_COPY, mappedAtCreation: true }));
    expect([staging.pooled, mapped.pooled]).toEqual([false, false]);
    expect(staging.realSizeBytes).toBe(10_000);
    mapped.buffer.unmap();
    manager.free(staging);
    manager.free(mapped);
    expect(harness.allocator.destroyed.has(staging.buffer) && harness.allocator.destroyed.has(mapped.buffer)).toBe(true);
    manager.endIteration('a');
    expect(manager.snapshot().lanes[0].pooledBytes).toBe(0);
    expect(manager.usage('a').ephemeralPeakBytes).toBe(14_096);
  });

  test('a full lane evicts idle buffers of other buckets before it grows', () => {
    makeManager();
    manager.admit({ jobId: 'a', ephemeralBytes: MiB }, { maxLanes: 1 });
    const laneBytes = manager.snapshot().lanes[0].sizeBytes;
    manager.beginIteration('a');
    const big = ok(manager.allocate('a', { size: MiB, usage: STORAGE_COPY }));
    manager.free(big);
    manager.endIteration('a');
    manager.beginIteration('a');
    const other = ok(manager.allocate('a', { size: MiB, usage: STORAGE_COPY | 0x0010 }));
    expect(harness.allocator.destroyed.has(big.buffer)).toBe(true);
    expect(manager.snapshot().lanes[0]).toMatchObject({ sizeBytes: laneBytes, pooledBytes: MiB });
    manager.free(other);
    manager.endIteration('a');
  });
});

describe('limits', () => {
  test('an allocation past capacity is an out-of-memory result for that job alone', async () => {
    makeManager(64 * MiB);
    manager.admit({ jobId: 'a', persistentBytes: 16 * MiB, ephemeralBytes: 0 }, { maxLanes: 4 });
    manager.admit({ jobId: 'b' }, { maxLanes: 4 });
    const weights = ok(manager.allocate('a', { size: 16 * MiB, usage: STORAGE_COPY }));
    harness.device.queue.writeBuffer(weights.buffer, 0, new Uint8Array(4096).fill(7));
    const versionBefore = manager.version;

    // a reserved 17.6 MiB; b has no share, so it may take the 46.4 MiB nobody reserved.
    ok(manager.allocate('b', { size: 40 * MiB, usage: STORAGE_COPY }));
    expect(manager.version).toBeGreaterThan(versionBefore);
    const persistent = manager.allocate('b', { size: 10 * MiB, usage: STORAGE_COPY });
    expect(persistent).toEqual({
      ok: false,
      errorType: 'out-of-memory',
      message: 'out of memory: job b asked for 10 MiB of persistent memory; its share is 0 B (declared + 10%), it holds 40 MiB, and only 6.40 MiB of the GPU\'s 64 MiB is free',
    });
    manager.beginIteration('b');
    const ephemeral = manager.allocate('b', { size: 8 * MiB, usage: STORAGE_COPY });
    expect(ephemeral.ok).toBe(false);
    expect(!ephemeral.ok && ephemeral.message).toMatch(/^out of memory: job b's iteration asked for 8 MiB in lane-2 \(size 0 B, 0 B held by iterations\) and only 6\.40 MiB/);
    manager.endIteration('b');

    // a is untouched: its buffer alive with its data, its share still usable.
    expect(harness.allocator.destroyed.has(weights.buffer)).toBe(false);
    expect((await readBytes(weights.buffer, 4096)).every((byte) => byte === 7)).toBe(true);
    expect(manager.usage('a').persistentBytes).toBe(16 * MiB);
    ok(manager.allocate('a', { size: MiB, usage: STORAGE_COPY }));
    checkInvariant();
    expect(manager.snapshot().freeBytes).toBe(64 * MiB - 57 * MiB);
  });

  test('bad requests are answered, never thrown', () => {
    makeManager();
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    expect(manager.allocate('nobody', { size: 4, usage: STORAGE_COPY })).toMatchObject({ ok: false, errorType: 'validation' });
    expect(manager.allocate('a', { size: -4, usage: STORAGE_COPY })).toMatchObject({ ok: false, message: 'buffer size -4 is not a whole number of bytes' });
    expect(manager.allocate('a', { size: 1.5, usage: STORAGE_COPY })).toMatchObject({ ok: false, errorType: 'validation' });
    expect(manager.allocate('a', { size: 4, usage: Number.NaN })).toMatchObject({ ok: false, errorType: 'validation' });
    expect(manager.liveBuffers().count).toBe(0);
  });
});

describe('release', () => {
  test('returns every byte and destroys every real buffer, even mid-iteration', () => {
    makeManager();
    manager.admit({ jobId: 'a', persistentBytes: 8 * MiB, ephemeralBytes: 8000 * 1024 }, { maxLanes: 1 });
    manager.admit({ jobId: 'b', persistentBytes: MiB, ephemeralBytes: 2 * MiB }, { maxLanes: 1 });
    ok(manager.allocate('a', { size: 8 * MiB, usage: STORAGE_COPY }));
    ok(manager.allocate('b', { size: MiB, usage: STORAGE_COPY }));
    manager.beginIteration('a');
    const idleLater = ok(manager.allocate('a', { size: 2 * MiB, usage: STORAGE_COPY }));
    ok(manager.allocate('a', { size: 4096, usage: STORAGE_COPY })); // survives
    manager.free(idleLater);
    manager.endIteration('a');
    manager.beginIteration('a');
    ok(manager.allocate('a', { size: 3 * MiB, usage: STORAGE_COPY })); // lent when a goes
    const freedPending = ok(manager.allocate('a', { size: MiB, usage: STORAGE_COPY }));
    manager.free(freedPending);
    ok(manager.allocate('a', { size: 1234, usage: MAP_READ_COPY_DST }));
    checkInvariant();

    const version = manager.version;
    manager.release('a');
    expect(manager.version).toBeGreaterThan(version);
    expect(manager.laneOf('a')).toBeNull();
    expect(manager.usage('a')).toEqual({ persistentBytes: 0, ephemeralPeakBytes: 0 });
    // b keeps its buffer and the lane, with the idle 2 MiB buffer still pooled; the lane gave back the 4 KiB that survived into a's state.
    expect(manager.snapshot().lanes).toEqual([{ id: 'lane-1', sizeBytes: 8400 * 1024 - 4096, pooledBytes: 2 * MiB, jobs: ['b'], running: null }]);
    expect(harness.allocator.live()).toHaveLength(2);
    manager.free(freedPending); // after release: nothing happens
    manager.release('a'); // idempotent

    manager.release('b');
    expect(harness.allocator.live()).toEqual([]);
    expect(harness.allocator.destroyed.size).toBe(harness.allocator.created.length);
    expect(manager.liveBuffers()).toEqual({ count: 0, bytes: 0 });
    expect(manager.snapshot()).toMatchObject({ usedBytes: 0, freeBytes: 256 * MiB, committedBytes: 0, jobs: [], lanes: [] });
  });
});

describe('query sets', () => {
  test('count as persistent memory of their job, inside iterations too, within its room, until destroyed or released', () => {
    makeManager(MiB);
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    let made = 0;
    const create = (count: number) => () => {
      made += 1;
      return harness.device.createQuerySet({ type: 'occlusion', count });
    };
    const first = manager.allocateResource('a', 'querySet', 4096 * 8, create(4096));
    if (!first.ok) throw new Error(first.message);
    manager.beginIteration('a');
    const second = manager.allocateResource('a', 'querySet', 2 * 8, create(2));
    manager.endIteration('a');
    expect(second.ok).toBe(true);
    expect(manager.snapshot().jobs).toMatchObject([{ id: 'a', persistentBytes: 32768 + 16, querySetBytes: 32768 + 16 }]);
    expect(manager.liveBuffers()).toEqual({ count: 2, bytes: 32768 + 16 });
    checkInvariant();

    // Past the job's room: an out-of-memory refusal, and nothing is created.
    ok(manager.allocate('a', { size: MiB - 32768 - 16, usage: STORAGE_COPY }));
    expect(manager.allocateResource('a', 'querySet', 8, create(1))).toMatchObject({ ok: false, errorType: 'out-of-memory' });
    expect(made).toBe(2);

    manager.freeResource(first.lease);
    manager.freeResource(first.lease); // idempotent
    expect(manager.snapshot().jobs).toMatchObject([{ persistentBytes: MiB - 32768, querySetBytes: 16 }]);
    expect(manager.allocateResource('b', 'querySet', 8, create(1))).toMatchObject({ ok: false, errorType: 'validation' });
    manager.release('a');
    expect(manager.liveBuffers()).toEqual({ count: 0, bytes: 0 });
  });
});

describe('textures', () => {
  test('count their footprint as persistent memory beside query sets; destroyed at free and at release', () => {
    makeManager(MiB);
    manager.admit({ jobId: 'a' }, { maxLanes: 1 });
    const made: GPUTexture[] = [];
    const create = () => {
      const texture = harness.device.createTexture({ size: [64, 64], format: 'rgba8unorm', usage: GPUTextureUsage.COPY_DST });
      made.push(texture);
      return texture;
    };
    const first = manager.allocateResource('a', 'texture', 64 * 64 * 4, create);
    if (!first.ok) throw new Error(first.message);
    expect(first.lease.resource).toBe(made[0]);
    const queries = manager.allocateResource('a', 'querySet', 16, () => harness.device.createQuerySet({ type: 'occlusion', count: 2 }));
    expect(queries.ok).toBe(true);
    expect(manager.snapshot().jobs).toMatchObject([{ persistentBytes: 16384 + 16, textureBytes: 16384, querySetBytes: 16 }]);
    checkInvariant();

    // Past the job's room: out of memory, and no texture is made.
    expect(manager.allocateResource('a', 'texture', MiB, create)).toMatchObject({ ok: false, errorType: 'out-of-memory' });
    expect(made).toHaveLength(1);
    // A creation that throws is the job's validation error, and counts nothing.
    expect(manager.allocateResource('a', 'texture', 4, () => { throw new TypeError('bad descriptor'); })).toMatchObject({ ok: false, errorType: 'validation' });

    manager.freeResource(first.lease);
    manager.freeResource(first.lease); // idempotent
    expect(manager.snapshot().jobs).toMatchObject([{ persistentBytes: 16, textureBytes: 0 }]);
    manager.release('a');
    expect(manager.liveBuffers()).toEqual({ count: 0, bytes: 0 });
  });
});
