import { describe, expect, test } from 'vitest';
import { BufferPool, sizeClassBytes } from '../../../core/memory/bufferPool.js';
import { Ledger } from '../../../core/memory/ledger.js';
import { STORAGE_COPY, fakeAllocator } from './helpers.js';

describe('sizeClassBytes', () => {
  test('256-byte granules up to 4 KiB', () => {
    expect([1, 256, 257, 1000, 4095, 4096].map(sizeClassBytes)).toEqual([256, 256, 512, 1024, 4096, 4096]);
    expect(sizeClassBytes(0)).toBe(0);
  });

  test('8 steps per power of two above 4 KiB', () => {
    expect(sizeClassBytes(4097)).toBe(4608);
    expect(sizeClassBytes(8192)).toBe(8192);
    expect(sizeClassBytes(8193)).toBe(9216);
    expect(sizeClassBytes(1024 ** 3 + 1)).toBe(1024 ** 3 + 128 * 1024 ** 2);
  });

  test('a class is never smaller than the size, never wastes 12.5% or more above 4 KiB, and never decreases', () => {
    let previous = 0;
    let seed = 7;
    const sizes: number[] = [];
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      sizes.push(4097 + (seed % 2 ** 28));
    }
    for (const size of sizes.sort((a, b) => a - b)) {
      const classBytes = sizeClassBytes(size);
      expect(classBytes).toBeGreaterThanOrEqual(size);
      expect((classBytes - size) / size).toBeLessThan(0.125);
      expect(classBytes).toBeGreaterThanOrEqual(previous);
      previous = classBytes;
    }
  });
});

describe('BufferPool', () => {
  function makePool(maxBufferSizeBytes?: number) {
    const ledger = new Ledger();
    let id = 0;
    const allocator = { ...fakeAllocator(), maxBufferSizeBytes };
    const pool = new BufferPool({ laneId: 'lane-1', allocator, ledger, nextBufferId: () => ++id });
    return { pool, ledger };
  }

  test('reuses only the same usage and size class, and keeps the ledger in step', () => {
    const { pool, ledger } = makePool();
    expect(pool.reuse('a', STORAGE_COPY, 1000, 'x')).toBeNull();
    const first = pool.create('a', STORAGE_COPY, 1000, 'x');
    expect(first.sizeBytes).toBe(1024);
    expect(ledger.get(first.id)).toMatchObject({ state: 'ephemeral', jobId: 'a', laneId: 'lane-1' });
    pool.giveBack(first);
    expect(ledger.laneIdleBytes('lane-1')).toBe(1024);
    expect(pool.reuse('b', STORAGE_COPY | 0x0010, 1000, 'x')).toBeNull(); // other usage
    expect(pool.reuse('b', STORAGE_COPY, 2000, 'x')).toBeNull(); // other class
    expect(pool.reuse('b', STORAGE_COPY, 800, 'y')).toBe(first); // 800 -> 1024 too
    expect(ledger.get(first.id)).toMatchObject({ state: 'ephemeral', jobId: 'b' });
    expect(ledger.lanePooledBytes('lane-1')).toBe(1024);
  });

  test('evictIdle destroys the oldest idle buffers until enough bytes are freed', () => {
    const { pool, ledger } = makePool();
    const buffers = [1024, 2048, 4096].map((size) => pool.create('a', STORAGE_COPY, size, 'x'));
    for (const real of buffers) pool.giveBack(real);
    expect(pool.evictIdle(1500)).toBe(1024 + 2048);
    expect(pool.counts).toEqual({ idle: 1, lent: 0 });
    expect(ledger.liveBuffers()).toEqual({ count: 1, bytes: 4096 });
    expect(pool.reuse('a', STORAGE_COPY, 4096, 'x')).toBe(buffers[2]);
    expect(pool.evictIdle(1)).toBe(0); // lent buffers are never evicted
  });

  test('never rounds past maxBufferSize', () => {
    const { pool } = makePool(5000);
    expect(pool.classSizeFor(4096)).toBe(4096);
    expect(pool.classSizeFor(4500)).toBe(4608);
    expect(pool.classSizeFor(4700)).toBeNull();
  });

  test('destroyAll empties the pool and the ledger', () => {
    const { pool, ledger } = makePool();
    const idle = pool.create('a', STORAGE_COPY, 512, 'x');
    pool.giveBack(idle);
    pool.create('a', STORAGE_COPY, 512, 'x');
    pool.destroyAll();
    expect(pool.counts).toEqual({ idle: 0, lent: 0 });
    expect(ledger.liveBuffers()).toEqual({ count: 0, bytes: 0 });
  });
});
