/**
 * A bulk folder for a test, as prepareBulkDir makes one: in shared memory and
 * named for this process's pid (jobs check the service's links against that
 * name). Made before each test and removed after it, with the pool `closing` gives.
 */
import { afterEach, beforeEach } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface BulkFolder {
  /** The folder of the current test. */
  readonly dir: string;
  /** Something to close after the current test (a ScratchPool). */
  closing(item: { close(): void }): void;
}

export function useBulkFolder(prefix: string): BulkFolder {
  let root = '';
  let dir = '';
  const open: { close(): void }[] = [];
  beforeEach(() => {
    root = mkdtempSync(`/dev/shm/${prefix}-`);
    dir = join(root, String(process.pid));
    mkdirSync(dir);
  });
  afterEach(() => {
    for (const item of open.splice(0)) item.close();
    rmSync(root, { recursive: true, force: true });
  });
  return { get dir() { return dir; }, closing: (item) => void open.push(item) };
}
