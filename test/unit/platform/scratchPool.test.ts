/**
 * The service's scratch rings with the real shared-memory addon: a job's link,
 * its mapping and the service's see the same bytes; the ring cannot shrink; it is
 * handed on zeroed only once the job's processes exited, else unmapped; the pool keeps to its bound.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, openSync, readlinkSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { useBulkFolder } from '../../helpers/bulkFolder.js';
import { join } from 'node:path';
import { BulkScratch } from '../../../core/client/bulkScratch.js';
import { ScratchPool, scratchPoolFor } from '../../../core/platform/scratchPool.js';
import { loadSharedMemory } from '../../../core/platform/sharedMemory.js';

const { addon, reason } = loadSharedMemory();
const RING_BYTES = 1024 * 1024;

const folder = useBulkFolder('salus-pool-test');
const newPool = (options: ConstructorParameters<typeof ScratchPool>[2]) => {
  const pool = new ScratchPool(folder.dir, addon!, { ringBytes: RING_BYTES, ...options });
  folder.closing(pool);
  return pool;
};

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

describe.runIf(process.platform === 'linux')('the shared-memory addon', () => {
  it('is built and loads here (npm install builds it)', () => {
    expect(reason).toBeNull();
    expect(addon).not.toBeNull();
  });
});

describe.runIf(addon !== null)('ScratchPool', () => {
  it("gives a job a ring that its mapping and the service's share, and unmaps it when the job ends", async () => {
    const pool = newPool({ poolBytes: 4 * RING_BYTES });
    expect(scratchPoolFor(folder.dir)).toBe(pool);
    await until(() => pool.stats.spareReady);
    pool.assign('job-1');
    const link = join(folder.dir, 'job-1-s');
    expect(readlinkSync(link)).toMatch(new RegExp(`^/proc/${process.pid}/fd/\\d+$`));
    const scratch = new BulkScratch(link, 64 * RING_BYTES);
    await scratch.prepare();
    expect(scratch.isMapped).toBe(true);
    const bytes = new Uint8Array(4096).map((_, i) => i % 251);
    expect(scratch.write(bytes)).toBe(0);
    expect(scratch.write(bytes)).toBe(4096);
    const ring = pool.regionOf('job-1')!;
    expect(ring.byteLength).toBe(RING_BYTES);
    expect([...ring.subarray(4096, 8192)]).toEqual([...bytes]);
    // The ring's size bounds the job's space, whatever it asked for.
    expect(scratch.write(new Uint8Array(RING_BYTES))).toBeNull();
    // Sealed: the job can neither shrink the ring under the service's mapping nor grow it.
    const fd = openSync(link, 'r+');
    expect(() => ftruncateSync(fd, 0)).toThrow(/EPERM/);
    expect(() => writeSync(fd, new Uint8Array(1), 0, 1, RING_BYTES)).toThrow(/EPERM/);
    closeSync(fd);
    const ringFd = `/proc/self/fd/${readlinkSync(link).split('/').pop()}`;
    // By inode: the pool's next ring may get the same descriptor number.
    const inode = statSync(ringFd).ino;
    const isRing = () => { try { return statSync(ringFd).ino === inode; } catch { return false; } };
    expect(isRing()).toBe(true);
    pool.release('job-1');
    expect(pool.regionOf('job-1')).toBeUndefined();
    expect(ring.byteLength).toBe(0);
    expect(existsSync(link)).toBe(false);
    // Unmapped and closed on the thread pool, not on the service's thread.
    await until(() => !isRing());
    scratch.close();
  });

  it('hands a ring only to the job it was made for, and a taken name keeps its own file', async () => {
    const pool = newPool({ poolBytes: 4 * RING_BYTES });
    await until(() => pool.stats.spareReady);
    writeFileSync(join(folder.dir, 'job-1-s'), 'the job was first');
    pool.assign('job-1');
    expect(pool.regionOf('job-1')).toBeUndefined();
    expect(pool.stats.spareReady).toBe(true);
    pool.assign('job-2');
    expect(pool.regionOf('job-2')).toBeDefined();
    expect(pool.regionOf('job-3')).toBeUndefined();
  });

  it('holds at most poolBytes: later jobs wait for a ring, and get one when another job ends', async () => {
    const pool = newPool({ poolBytes: 2 * RING_BYTES });
    await until(() => pool.stats.spareReady);
    pool.assign('job-1');
    // A job that waits gets the next ring made.
    pool.assign('job-2');
    await until(() => pool.regionOf('job-2') !== undefined);
    pool.assign('job-3');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(pool.stats).toMatchObject({ live: 2, spareReady: false, maxRings: 2 });
    expect(pool.regionOf('job-3')).toBeUndefined();
    expect(existsSync(join(folder.dir, 'job-3-s'))).toBe(false);
    pool.release('job-1');
    await until(() => pool.regionOf('job-3') !== undefined);
    expect(existsSync(join(folder.dir, 'job-3-s'))).toBe(true);
  });
});

describe.runIf(addon !== null)('ScratchPool without a ring per job', () => {
  it("makes no ring that no job waits for, and hands an ended job's ring on, zeroed, once its processes have exited", async () => {
    const pool = newPool({ poolBytes: 4 * RING_BYTES });
    await until(() => pool.stats.spareReady);
    pool.assign('job-1');
    const first = pool.regionOf('job-1')!;
    // Its process: a child that maps nothing of ours, alive until the test ends it.
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    pool.setOwners('job-1', [child.pid!]);
    first.fill(7, 0, 16);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The spare was taken and no job waits: nothing is made (the ring in use comes back).
    expect(pool.stats).toMatchObject({ live: 1, spareReady: false, made: 1 });
    pool.release('job-1');
    expect(pool.regionOf('job-1')).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Still alive: not handed on (and not unmapped: it may yet be).
    expect(pool.stats).toMatchObject({ live: 0, spareReady: false, made: 1 });
    expect(first.byteLength).toBe(RING_BYTES);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    await until(() => pool.stats.spareReady);
    pool.assign('job-2');
    // The same memory, not a new ring, and none of job-1's bytes in it.
    expect(pool.regionOf('job-2')).toBe(first);
    expect(pool.stats.made).toBe(1);
    expect(first.subarray(0, 16).every((byte) => byte === 0)).toBe(true);
  });

  it('unmaps the ring of a job whose processes it cannot name, or that outlive the wait', async () => {
    const pool = newPool({ poolBytes: 4 * RING_BYTES, recycleWaitMs: 200 });
    await until(() => pool.stats.spareReady);
    pool.assign('job-1');
    const unnamed = pool.regionOf('job-1')!;
    pool.release('job-1');
    expect(unnamed.byteLength).toBe(0);
    await until(() => pool.stats.spareReady);
    pool.assign('job-2');
    const outlived = pool.regionOf('job-2')!;
    pool.setOwners('job-2', [process.pid]);
    pool.release('job-2');
    await until(() => outlived.byteLength === 0);
    await until(() => pool.stats.made === 3);
  });
});

describe('BulkScratch and links', () => {
  it("opens no link but one to the service's own open file, and then writes nothing", () => {
    // A link the job did not get from the service: another process's file, and a plain file elsewhere.
    symlinkSync('/proc/1/fd/0', join(folder.dir, 'job-1-s'));
    symlinkSync('/etc/hostname', join(folder.dir, 'job-2-s'));
    for (const name of ['job-1-s', 'job-2-s']) {
      const scratch = new BulkScratch(join(folder.dir, name));
      expect(scratch.write(new Uint8Array(4))).toBeNull();
      expect(scratch.isMapped).toBe(false);
    }
  });
});
