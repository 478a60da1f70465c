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
  it('hands out space first-fit, frees the oldest uploads as the service reads them, and keeps its pages', () => {
    const scratch = new BulkScratch(join(dir, 's'), 64);
    expect(scratch.write(bytes(16, 1))).toBe(0);
    expect(scratch.write(bytes(16, 2))).toBe(16);
    scratch.consumed(16);
    // The first upload was read: its space is free again, the second's is not.
    expect(scratch.outstanding).toBe(16);
    expect(scratch.write(bytes(8, 3))).toBe(0);
    expect(scratch.write(bytes(16, 4))).toBe(32);
    expect(scratch.write(bytes(24, 5))).toBeNull();
    scratch.consumed(40);
    expect(scratch.outstanding).toBe(0);
    expect(scratch.write(bytes(64, 6))).toBe(0);
    expect(statSync(join(dir, 's')).size).toBe(64);
    expect([...readFileSync(join(dir, 's'))]).toEqual([...bytes(64, 6)]);
    scratch.close();
  });

  it('holds no space for readbacks in a file of its own (the service writes only into rings it made)', () => {
    const scratch = new BulkScratch(join(dir, 's'), 64);
    expect(scratch.write(bytes(8, 1))).toBe(0);
    expect(scratch.hold(8)).toBeNull();
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
