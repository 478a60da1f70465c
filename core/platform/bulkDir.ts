/**
 * The bulk channel for large data (uploads, writes to mapped ranges): a private
 * folder in shared memory (`/dev/shm` on Linux) where a job writes a big payload
 * as a file and the service reads it, instead of pushing it through the socket
 * in 64 KiB reads. Like dawn_wire's shared-memory transfer buffers, it moves
 * bytes with a few large copies; everything else still travels on the socket.
 */
import { closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_CHUNK_BYTES } from '../protocol/commands.js';
import { isProcessAlive } from './processAlive.js';

/** Payloads at least this big go through the bulk channel when one exists. */
export const BULK_MIN_BYTES = 1024 * 1024;

/**
 * Creates this service's bulk folder, `/dev/shm/salus-<uid>/<pid>` (private to
 * the user; one per service, so job ids of two services never meet), and removes
 * folders that services no longer running left behind. Null where there is no
 * shared-memory file system, when `SALUS_BULK=0`, or when the folder is not safely ours.
 */
export function prepareBulkDir(): string | null {
  if (process.platform !== 'linux' || process.env.SALUS_BULK === '0') return null;
  const uid = process.getuid?.();
  if (uid === undefined) return null;
  const root = join('/dev/shm', `salus-${uid}`);
  try {
    mkdirSync(root, { mode: 0o700, recursive: true });
    const stat = lstatSync(root);
    if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o077) !== 0) return null;
    for (const name of readdirSync(root)) {
      if (/^\d+$/.test(name) && !isProcessAlive(Number(name))) rmSync(join(root, name), { recursive: true, force: true });
    }
    const dir = join(root, String(process.pid));
    mkdirSync(dir, { mode: 0o700, recursive: true });
    return dir;
  } catch {
    return null;
  }
}

/** Removes the service's bulk folder (at shutdown). */
export function removeBulkDir(dir: string | null): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

/** Removes the files a job left in the bulk folder (names start with `${prefix}-`). */
export function removeBulkFiles(dir: string, prefix: string): void {
  try {
    for (const name of readdirSync(dir)) {
      if (name.startsWith(`${prefix}-`)) unlinkSync(join(dir, name));
    }
  } catch {
    // The folder is gone or unreadable: nothing of ours to clean.
  }
}

/** The largest a job's scratch file or ring grows (shared memory it holds until it exits). */
export const SCRATCH_MAX_BYTES = 256 * 1024 * 1024;

/** Reused for every bulk read, so reading a file costs one copy and no fresh pages. */
let staging = new Uint8Array(0);

/** The name of a job's scratch file in the bulk folder (core/client/bulkScratch.ts). */
export function scratchFileName(jobId: string): string {
  return `${jobId}-s`;
}

/**
 * Opens a job's file in the bulk folder for reading: a plain file only. Not
 * through a link, and without blocking, so a job that puts a FIFO or a device
 * there gets an error instead of stalling the service's one thread.
 */
export function openBulkFile(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    throw new Error('it is not a plain file');
  }
  return fd;
}

/**
 * Reads `lengthBytes` at `position` of `fd`. The bytes are a view into a staging
 * buffer the next call reuses: copy them (writeBuffer, a mapped range) before
 * reading again. Throws when the file ends first.
 */
export function readBulkBytes(fd: number, lengthBytes: number, position: number): Uint8Array {
  // Clients send pieces of at most DATA_CHUNK_BYTES; anything bigger gets a buffer of its own.
  if (staging.byteLength < lengthBytes && lengthBytes <= DATA_CHUNK_BYTES) staging = new Uint8Array(lengthBytes);
  const into = staging.byteLength >= lengthBytes ? staging : new Uint8Array(lengthBytes);
  for (let at = 0; at < lengthBytes;) {
    const read = readSync(fd, into, at, lengthBytes - at, position + at);
    if (read === 0) throw new Error(`it ended after ${at} of ${lengthBytes} bytes`);
    at += read;
  }
  return into.subarray(0, lengthBytes);
}

/**
 * Reads the bulk file at `path`, which must hold exactly `lengthBytes`, and
 * removes it (see readBulkBytes for the view it returns).
 * Throws with the reason when the file cannot be read or has another size.
 */
export function takeBulkFile(path: string, lengthBytes: number): Uint8Array {
  let fd: number | null = null;
  try {
    fd = openBulkFile(path);
    const sizeBytes = fstatSync(fd).size;
    if (sizeBytes !== lengthBytes) throw new Error(`it has ${sizeBytes} bytes, not ${lengthBytes}`);
    return readBulkBytes(fd, lengthBytes, 0);
  } finally {
    if (fd !== null) closeSync(fd);
    rmSync(path, { force: true });
  }
}
