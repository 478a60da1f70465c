/** The job's scratch file: space from the start, back once the service read all of it, never more than its cap. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BulkScratch } from '../../../core/client/bulkScratch.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-scratch-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

describe('BulkScratch', () => {
  it('hands out space in order, starts over once everything was read, and keeps its pages', () => {
    const scratch = new BulkScratch(join(dir, 's'), 64);
    expect(scratch.write(bytes(16, 1))).toBe(0);
    expect(scratch.write(bytes(16, 2))).toBe(16);
    scratch.consumed(16);
    // Half of it read: space starts over only once all of it was read.
    expect(scratch.write(bytes(16, 3))).toBe(32);
    scratch.consumed(32);
    expect(scratch.outstanding).toBe(0);
    expect(scratch.write(bytes(8, 4))).toBe(0);
    expect([...readFileSync(join(dir, 's')).subarray(0, 48)]).toEqual([...bytes(8, 4), ...bytes(8, 1), ...bytes(16, 2), ...bytes(16, 3)]);
    expect(statSync(join(dir, 's')).size).toBe(48);
    scratch.close();
  });

  it('says null when a payload would pass its cap, and when its file is not its own', () => {
    const scratch = new BulkScratch(join(dir, 's'), 32);
    expect(scratch.write(bytes(24, 1))).toBe(0);
    expect(scratch.write(bytes(16, 2))).toBeNull();
    scratch.close();
    writeFileSync(join(dir, 'planted'), 'x');
    const other = new BulkScratch(join(dir, 'planted'), 32);
    expect(other.write(bytes(4, 1))).toBeNull();
    expect(readFileSync(join(dir, 'planted'), 'utf8')).toBe('x');
  });
});
