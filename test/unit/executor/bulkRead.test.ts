/**
 * Where the service reads bytes a job sent by reference: its own ring, as a
 * view (no copy), with the job's offsets checked; otherwise its scratch file.
 */
import { describe, expect, it } from 'vitest';
import { unlinkSync, writeFileSync } from 'node:fs';
import { useBulkFolder } from '../../helpers/bulkFolder.js';
import { join } from 'node:path';
import { BulkScratch } from '../../../core/client/bulkScratch.js';
import { BulkReader } from '../../../core/executor/bulkRead.js';
import { ReplayError } from '../../../core/executor/objects.js';
import { ScratchPool } from '../../../core/platform/scratchPool.js';
import { loadSharedMemory } from '../../../core/platform/sharedMemory.js';

const { addon } = loadSharedMemory();
const RING_BYTES = 1024 * 1024;

const folder = useBulkFolder('salus-read-test');

describe.runIf(addon !== null)('BulkReader with a ring', () => {
  it("reads the job's ring in place, checks every offset, and never reads another job's ring", async () => {
    const pool = new ScratchPool(folder.dir, addon!, { ringBytes: RING_BYTES, poolBytes: 3 * RING_BYTES });
    folder.closing(pool);
    for (const jobId of ['job-1', 'job-2']) pool.assign(jobId);
    for (let i = 0; i < 500 && !pool.regionOf('job-2'); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const scratch = new BulkScratch(join(folder.dir, 'job-1-s'));
    await scratch.prepare();
    const offset = scratch.write(new Uint8Array(64).fill(7))!;
    const reader = new BulkReader(folder.dir, 'job-1');
    const bytes = reader.read({ scratch: offset, length: 64 });
    expect([...bytes]).toEqual(new Array(64).fill(7));
    expect(bytes.buffer).toBe(pool.regionOf('job-1')!.buffer);
    expect(() => reader.read({ scratch: RING_BYTES - 8, length: 16 })).toThrow(ReplayError);
    expect(() => reader.read({ scratch: RING_BYTES - 8, length: 16 })).toThrow(/scratch ring cannot be read at \[1048568, 1048584\): it holds 1048576 bytes/);
    expect(() => reader.read({ scratch: -1, length: 4 })).toThrow(ReplayError);
    expect(() => reader.read({ scratch: 0.5, length: 4 })).toThrow(ReplayError);
    expect(() => reader.read({ scratch: 2 ** 60, length: 2 ** 60 })).toThrow(ReplayError);
    // job-2's reader sees job-2's ring (zeros), not job-1's bytes.
    expect([...new BulkReader(folder.dir, 'job-2').read({ scratch: offset, length: 64 })]).toEqual(new Array(64).fill(0));
    // The link is the job's to break: the service reads its own mapping, never the link.
    unlinkSync(join(folder.dir, 'job-1-s'));
    writeFileSync(join(folder.dir, 'job-1-s'), new Uint8Array(64).fill(9));
    expect([...reader.read({ scratch: offset, length: 64 })]).toEqual(new Array(64).fill(7));
    reader.close();
    scratch.close();
  });
});

describe('BulkReader without a ring', () => {
  it("reads the job's own scratch file, and says why when it cannot", () => {
    const scratch = new BulkScratch(join(folder.dir, 'job-1-s'));
    const offset = scratch.write(new Uint8Array(32).fill(5))!;
    const reader = new BulkReader(folder.dir, 'job-1');
    expect([...reader.read({ scratch: offset, length: 32 })]).toEqual(new Array(32).fill(5));
    expect(() => reader.read({ scratch: 16, length: 32 })).toThrow(/scratch file cannot be read at \[16, 48\): it ended after 16 of 32 bytes/);
    expect(() => new BulkReader(folder.dir, 'job-2').read({ scratch: 0, length: 4 })).toThrow(/scratch file cannot be read/);
    expect(() => new BulkReader(null, 'job-1').read({ scratch: 0, length: 4 })).toThrow(/no bulk channel/);
    reader.close();
    scratch.close();
  });
});
