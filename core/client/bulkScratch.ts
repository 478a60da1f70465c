/**
 * A job's scratch file in the bulk folder (core/platform/bulkDir.ts): large
 * payloads are written into it in place, at offsets the commands name, and the
 * service reads them from there. Unlike a file per payload, its pages stay
 * allocated between uploads (no fresh shared-memory pages to fault in and zero,
 * no unlink), so a job that uploads weights or batches every step pays one
 * copy into memory that is already there.
 *
 * Space is handed out from the start of the file and comes back when the
 * service says it has read every byte handed out (`consumed`, from its
 * `scratchRead` messages, which follow each batch that carried scratch bytes):
 * then writing starts over at offset 0. The file grows to the most bytes ever
 * outstanding at once, at most `maxBytes`; a payload that does not fit, or any
 * failure of the file, makes `write` return null and the caller sends the bytes
 * another way. Never blocks: a synchronous `writeBuffer` of 256 MiB cannot wait
 * for the service to catch up.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

/** The largest a job's scratch file grows (shared memory it holds until it exits). */
export const SCRATCH_MAX_BYTES = 256 * 1024 * 1024;

export class BulkScratch {
  /** Undefined until first used; null once it proved unusable. */
  private fd: number | null | undefined;
  private headBytes = 0;
  private outstandingBytes = 0;

  constructor(private readonly path: string, private readonly maxBytes = SCRATCH_MAX_BYTES) {}

  /** Writes `bytes` into free space; returns their offset, or null (full, or the file cannot be used). */
  write(bytes: Uint8Array): number | null {
    if (this.fd === undefined) {
      try {
        // Created anew (never someone else's file), readable by its user only.
        this.fd = openSync(this.path, 'wx+', 0o600);
      } catch {
        this.fd = null;
      }
    }
    if (this.fd === null || this.headBytes + bytes.byteLength > this.maxBytes) return null;
    const offset = this.headBytes;
    try {
      for (let at = 0; at < bytes.byteLength;) at += writeSync(this.fd, bytes, at, bytes.byteLength - at, offset + at);
    } catch {
      this.close();
      this.fd = null;
      return null;
    }
    this.headBytes += bytes.byteLength;
    this.outstandingBytes += bytes.byteLength;
    return offset;
  }

  /** The service has read `bytes` more of what was written; once it read all, space starts over at 0. */
  consumed(bytes: number): void {
    this.outstandingBytes = Math.max(0, this.outstandingBytes - bytes);
    if (this.outstandingBytes === 0) this.headBytes = 0;
  }

  /** Bytes written and not yet read by the service. */
  get outstanding(): number {
    return this.outstandingBytes;
  }

  close(): void {
    if (typeof this.fd === 'number') closeSync(this.fd);
    this.fd = null;
  }
}
