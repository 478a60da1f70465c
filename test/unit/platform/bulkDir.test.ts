import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { takeBulkFile } from '../../../core/platform/bulkDir.js';
import { DATA_CHUNK_BYTES } from '../../../core/protocol/commands.js';

describe('takeBulkFile', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-bulk-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const put = (name: string, bytes: Uint8Array) => {
    writeFileSync(join(dir, name), bytes);
    return join(dir, name);
  };

  it('returns the file\'s bytes and removes it; the next read reuses the staging buffer', () => {
    const first = takeBulkFile(put('job-1-1', new Uint8Array([1, 2, 3, 4])), 4);
    expect([...first]).toEqual([1, 2, 3, 4]);
    expect(existsSync(join(dir, 'job-1-1'))).toBe(false);
    const second = takeBulkFile(put('job-1-2', new Uint8Array([9, 8])), 2);
    expect([...second]).toEqual([9, 8]);
    expect(second.buffer).toBe(first.buffer);
  });

  it('refuses a file of another size, and removes it', () => {
    const path = put('job-1-3', new Uint8Array(10));
    expect(() => takeBulkFile(path, 12)).toThrow('it has 10 bytes, not 12');
    expect(existsSync(path)).toBe(false);
  });

  it('says so when the file is missing', () => {
    expect(() => takeBulkFile(join(dir, 'job-1-4'), 1)).toThrow(/ENOENT/);
  });

  it('gives a piece bigger than clients send a buffer of its own', () => {
    const small = takeBulkFile(put('job-1-5', new Uint8Array([5])), 1);
    const big = takeBulkFile(put('job-1-6', new Uint8Array(DATA_CHUNK_BYTES + 4).fill(3)), DATA_CHUNK_BYTES + 4);
    expect(big.buffer).not.toBe(small.buffer);
    expect(big[DATA_CHUNK_BYTES + 3]).toBe(3);
  });
});
