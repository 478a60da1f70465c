/**
 * A job's scratch space in the bulk folder (core/platform/bulkDir.ts): large
 * payloads are written into it in place, at offsets the commands name, and the
 * service reads them from there. Its pages stay allocated between uploads (no
 * fresh shared-memory pages to fault in and zero, no unlink), so a job that
 * uploads weights or batches every step pays one copy into memory that is
 * already there.
 *
 * Two kinds: where the service made the job a scratch ring
 * (core/platform/scratchPool.ts), `path` is a link to the service's sealed
 * memfd, already allocated; the job maps it too (core/platform/sharedMemory.ts)
 * and copies payloads straight into the mapping (with plain writes until the
 * mapping is ready, or where the addon is missing). Otherwise the job creates
 * the file itself, on first use, and writes to it.
 *
 * Space is handed out from the start and comes back when the service says it
 * has read every byte handed out (`consumed`, from its `scratchRead` messages,
 * which follow each batch that carried scratch bytes): then writing starts over
 * at offset 0. At most `maxBytes` (and the ring's size); a payload that does not
 * fit, or any failure of the file, makes `write` return null and the caller
 * sends the bytes another way. Never blocks: a synchronous `writeBuffer` of
 * 256 MiB cannot wait for the service to catch up.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { SCRATCH_MAX_BYTES } from '../platform/bulkDir.js';
import { loadSharedMemory, type SharedMemoryAddon, type SharedRegion } from '../platform/sharedMemory.js';

export class BulkScratch {
  /** Undefined until first used; null once it proved unusable. */
  private fd: number | null | undefined;
  private headBytes = 0;
  private outstandingBytes = 0;
  private limitBytes: number;
  /** The service's ring, mapped here once `mapShared` resolved. */
  private mapped: { addon: SharedMemoryAddon; region: SharedRegion; bytes: Uint8Array } | null = null;
  private closed = false;

  constructor(private readonly path: string, maxBytes = SCRATCH_MAX_BYTES) {
    this.limitBytes = maxBytes;
  }

  /** Whether payloads go into a mapping of the service's ring (one copy, no system call). */
  get isMapped(): boolean {
    return this.mapped !== null;
  }

  /**
   * Opens the service's ring, if it made one, and starts mapping it, so that the
   * first payload finds it ready. Resolves when the mapping is done or given up;
   * `write` works meanwhile. Calling it again does nothing.
   */
  async prepare(): Promise<void> {
    if (this.fd !== undefined) return;
    this.fd = this.openRing() ?? undefined;
    if (this.fd !== undefined) await this.mapRing(this.fd);
  }

  /** Writes `bytes` into free space; returns their offset, or null (full, or the file cannot be used). */
  write(bytes: Uint8Array): number | null {
    if (this.fd === undefined) {
      this.fd = this.openRing();
      if (this.fd !== null) void this.mapRing(this.fd);
      else this.fd = this.createFile();
    }
    if (this.fd === null || this.headBytes + bytes.byteLength > this.limitBytes) return null;
    const offset = this.headBytes;
    if (this.mapped) {
      this.mapped.bytes.set(bytes, offset);
    } else {
      try {
        for (let at = 0; at < bytes.byteLength;) at += writeSync(this.fd, bytes, at, bytes.byteLength - at, offset + at);
      } catch {
        this.close();
        return null;
      }
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
    this.closed = true;
    if (this.mapped) this.mapped.addon.unmap(this.mapped.region);
    this.mapped = null;
    if (typeof this.fd === 'number') closeSync(this.fd);
    this.fd = null;
  }

  /** Maps the ring; plain writes go on until that is done, and where it fails. */
  private async mapRing(fd: number): Promise<void> {
    const { addon } = loadSharedMemory();
    if (!addon) return;
    try {
      const region = await addon.mapShared(fd, this.limitBytes);
      if (this.closed) return addon.unmap(region);
      this.mapped = { addon, region, bytes: new Uint8Array(region.buffer) };
    } catch {
      // Plain writes into the ring still work.
    }
  }

  /**
   * The service's ring: `path` must be a link to one of the service's own open
   * files (`/proc/<pid>/fd/<n>`, where `<pid>` names the bulk folder). Null when
   * there is none, or when it is anything else.
   */
  private openRing(): number | null {
    try {
      if (!lstatSync(this.path).isSymbolicLink()) return null;
      const target = /^\/proc\/(\d+)\/fd\/\d+$/.exec(readlinkSync(this.path));
      if (!target || target[1] !== basename(dirname(this.path))) return null;
      const fd = openSync(this.path, constants.O_RDWR);
      this.limitBytes = Math.min(this.limitBytes, fstatSync(fd).size);
      return fd;
    } catch {
      return null;
    }
  }

  /** A file of the job's own, created anew (never someone else's), readable by its user only. */
  private createFile(): number | null {
    try {
      return openSync(this.path, 'wx+', 0o600);
    } catch {
      return null;
    }
  }
}
