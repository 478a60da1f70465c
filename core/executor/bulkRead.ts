/**
 * The service's side of the bulk channel for one job: where the bytes a
 * command names by reference (core/protocol/commandTable.ts DataRef) are read.
 * Scratch bytes come straight from the job's ring when the service made it one
 * (core/platform/scratchPool.ts): a view of the service's own mapping, no copy;
 * otherwise from the job's scratch file or a bulk file of its own, read into a
 * reused staging buffer. Offsets and lengths are the job's claims: every read is
 * checked against the ring or the file, and only the job's own names are read.
 */
import { closeSync } from 'node:fs';
import { join } from 'node:path';
import type { DataRef } from '../protocol/commandTable.js';
import { openBulkFile, readBulkBytes, removeBulkFiles, scratchFileName, takeBulkFile } from '../platform/bulkDir.js';
import { scratchPoolFor } from '../platform/scratchPool.js';
import { ReplayError } from './objects.js';

export class BulkReader {
  /** The job's scratch file, opened at its first use (when it has no ring). */
  private scratchFd: number | null = null;

  constructor(private readonly bulkDir: string | null, private readonly jobId: string) {}

  /**
   * The bytes `ref` names. A view valid until the next read (and, for a ring,
   * until the job writes there again, after the service said it read them):
   * copy it (writeBuffer, a mapped range) before reading again. Throws
   * ReplayError with the reason when the bytes cannot be had.
   */
  read(ref: Exclude<DataRef, [number, number]>): Uint8Array {
    if (!this.bulkDir) throw new ReplayError('this service has no bulk channel; send the bytes in the frame');
    if ('scratch' in ref) return this.readScratch(ref.scratch, ref.length);
    const { file, length } = ref;
    if (!file.startsWith(`${this.jobId}-`)) throw new ReplayError(`bulk file '${file}' does not belong to ${this.jobId}`);
    try {
      return takeBulkFile(join(this.bulkDir, file), length);
    } catch (error) {
      throw new ReplayError(`bulk file '${file}' cannot be read: ${(error as Error).message}`);
    }
  }

  /** Closes the job's scratch file and removes what it left in the bulk folder (its ring is the pool's to release). */
  close(): void {
    if (this.scratchFd !== null) closeSync(this.scratchFd);
    this.scratchFd = null;
    if (this.bulkDir) removeBulkFiles(this.bulkDir, this.jobId);
  }

  /** The job's scratch ring (the service's own mapping of it), if the service made it one and the job is still there. */
  ring(): Uint8Array | undefined {
    return scratchPoolFor(this.bulkDir)?.regionOf(this.jobId);
  }

  private readScratch(offset: number, lengthBytes: number): Uint8Array {
    const where = `[${offset}, ${offset + lengthBytes})`;
    const ring = this.ring();
    if (ring) {
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(lengthBytes) || offset < 0 || lengthBytes < 0 || offset + lengthBytes > ring.byteLength) {
        throw new ReplayError(`the job's scratch ring cannot be read at ${where}: it holds ${ring.byteLength} bytes`);
      }
      return ring.subarray(offset, offset + lengthBytes);
    }
    try {
      this.scratchFd ??= openBulkFile(join(this.bulkDir!, scratchFileName(this.jobId)));
      return readBulkBytes(this.scratchFd, lengthBytes, offset);
    } catch (error) {
      throw new ReplayError(`the job's scratch file cannot be read at ${where}: ${(error as Error).message}`);
    }
  }
}
