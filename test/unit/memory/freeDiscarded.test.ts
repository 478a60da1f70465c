/**
 * MemoryManager.freeDiscarded on a real shared device: a survivor (persistent buffer
 * a lane's pool made) that a framework discards inside its iteration joins the lane
 * instead of being destroyed, so bringing it back costs no createBuffer; its memory
 * is the lane's to lend again (zeroed for another job) from the iteration's end.
 */
import { describe, expect, test } from 'vitest';
import type { AllocResult, BufferLease, MemoryManager } from '../../../core/memory/memoryManager.js';
import { MiB, STORAGE_COPY, readBufferBytes } from './helpers.js';
import { useRealDeviceManager } from './realDevice.js';

const harness = useRealDeviceManager('freeDiscarded tests');
const SIZE_BYTES = 4096;

function ok(result: AllocResult): BufferLease {
  if (!result.ok) throw new Error(`expected an allocation, got: ${result.message}`);
  return result.lease;
}

/** A manager with job `a` (declaring persistentBytes) holding a survivor: made in its first iteration, alive at its end, filled with 7s. */
function withSurvivor(capacityBytes = 256 * MiB, persistentBytes = 0): { manager: MemoryManager; survivor: BufferLease } {
  const manager = harness.makeManager(capacityBytes);
  manager.admit({ jobId: 'a', persistentBytes, ephemeralBytes: 64 * 1024 }, { maxLanes: 1 });
  manager.beginIteration('a');
  const survivor = ok(manager.allocate('a', { size: SIZE_BYTES, usage: STORAGE_COPY, label: 'pooled by the framework' }));
  harness.device.queue.writeBuffer(survivor.buffer, 0, new Uint8Array(SIZE_BYTES).fill(7));
  manager.endIteration('a');
  expect(survivor).toMatchObject({ kind: 'persistent', pooled: true });
  return { manager, survivor };
}

function expectLedgerConsistent(manager: MemoryManager): void {
  const map = manager.snapshot();
  const persistentBytes = map.jobs.reduce((sum, job) => sum + job.persistentBytes, 0);
  const laneBytes = map.lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
  expect(map.usedBytes).toBe(persistentBytes + laneBytes);
  for (const lane of map.lanes) expect(lane.pooledBytes).toBeLessThanOrEqual(lane.sizeBytes);
}

describe('freeDiscarded', () => {
  test('a survivor discarded in an iteration joins the lane and is taken back, the same buffer with the job\'s bytes', async () => {
    const { manager, survivor } = withSurvivor();
    const created = harness.allocator.created.length;
    manager.beginIteration('a');
    manager.freeDiscarded(survivor);
    expect(harness.allocator.destroyed.has(survivor.buffer)).toBe(false);
    expect(survivor).toMatchObject({ kind: 'ephemeral', laneId: 'lane-1' });
    expect(manager.usage('a').persistentBytes).toBe(0);
    expect(manager.snapshot().lanes[0].pooledBytes).toBe(SIZE_BYTES);
    expectLedgerConsistent(manager);
    expect(manager.canTakeBack(survivor)).toBe(true);
    expect(manager.takeBack(survivor)).toBe(true);
    expect([...(await readBufferBytes(harness.device, survivor.buffer, SIZE_BYTES))].every((byte) => byte === 7)).toBe(true);
    manager.endIteration('a'); // alive again at the end: persistent again, out of the lane
    expect(survivor).toMatchObject({ kind: 'persistent', laneId: null });
    expect(manager.usage('a').persistentBytes).toBe(SIZE_BYTES);
    expect(harness.allocator.created.length).toBe(created);
    expectLedgerConsistent(manager);
  });

  test('not taken back, it is the pool\'s from the iteration\'s end: lent to another job zeroed', async () => {
    const { manager, survivor } = withSurvivor();
    manager.admit({ jobId: 'b', ephemeralBytes: 64 * 1024 }, { maxLanes: 1 });
    manager.beginIteration('a');
    manager.freeDiscarded(survivor);
    manager.endIteration('a');
    expect(manager.takeBack(survivor)).toBe(false);
    manager.beginIteration('b');
    const other = ok(manager.allocate('b', { size: SIZE_BYTES, usage: STORAGE_COPY }));
    expect(other.buffer).toBe(survivor.buffer);
    expect([...(await readBufferBytes(harness.device, other.buffer, SIZE_BYTES))].every((byte) => byte === 0)).toBe(true);
    manager.free(other);
    manager.endIteration('b');
    expectLedgerConsistent(manager);
  });

  test('outside an iteration it waits idle in the lane, as free() leaves it, and the next iteration is lent it without a createBuffer', () => {
    const { manager, survivor } = withSurvivor();
    manager.freeDiscarded(survivor);
    expect(harness.allocator.destroyed.has(survivor.buffer)).toBe(false);
    expect(manager.takeBack(survivor)).toBe(false);
    expect(manager.usage('a').persistentBytes).toBe(0);
    expect(manager.snapshot().lanes[0].pooledBytes).toBe(SIZE_BYTES);
    expectLedgerConsistent(manager);
    const created = harness.allocator.created.length;
    manager.beginIteration('a');
    const again = ok(manager.allocate('a', { size: SIZE_BYTES, usage: STORAGE_COPY, label: 'pooled by the framework' }));
    expect(again.buffer).toBe(survivor.buffer);
    expect(harness.allocator.created.length).toBe(created);
    manager.free(again);
    manager.endIteration('a');
  });

  test('where the lane cannot grow for it, it is destroyed as free() would', () => {

    // Capacity taken by another job's persistent memory, and `a`'s declared share still reserved once the survivor
    // leaves it: the lane, smaller than the survivor, may not grow for it.
    const full = withSurvivor(MiB, SIZE_BYTES);
    full.manager.admit({ jobId: 'c', persistentBytes: full.manager.snapshot().freeBytes - 32 * 1024 }, { maxLanes: 2 });
    full.manager.beginIteration('a');
    expect(full.manager.snapshot().lanes.find((lane) => lane.jobs.includes('a'))!.sizeBytes).toBeLessThan(SIZE_BYTES);
    full.manager.freeDiscarded(full.survivor);
    expect(harness.allocator.destroyed.has(full.survivor.buffer)).toBe(true);
    expect(full.manager.usage('a').persistentBytes).toBe(0);
    expectLedgerConsistent(full.manager);
    full.manager.endIteration('a');
  });
});
