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
 * Space is handed out first-fit (core/client/ringSpans.ts): an upload's comes
 * back when the service says it has read it (`consumed`, from its `scratchRead`
 * messages, which follow each batch that carried scratch bytes); a readback's
 * (`hold`: the service copies a mapped range there) when the job releases it at
 * unmap. At most `maxBytes` (and the ring's size); a payload that does not fit,
 * or any failure of the file, makes `write` return null and the caller sends
 * the bytes another way. Never blocks: a synchronous `writeBuffer` of 256 MiB
 * cannot wait for the service to catch up.
 *
 * Nothing happens before the first use: a job that never moves bulk bytes opens
 * and maps nothing (mapping a 256 MiB ring populates its page tables: tens of
 * milliseconds of kernel time).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { SCRATCH_MAX_BYTES } from '../platform/bulkDir.js';
import { loadSharedMemory, type SharedMemoryAddon, type SharedRegion } from '../platform/sharedMemory.js';
import { RingSpans } from './ringSpans.js';

export class BulkScratch {
  /** Undefined until first used; null once it proved unusable. */
  private fd: number | null | undefined;
  /** Whether `fd` is the service's ring (not a file of the job's own). */
  private ring = false;
  private readonly spans: RingSpans;
  /** The service's ring, mapped here once `mapShared` resolved. */
  private mapped: { addon: SharedMemoryAddon; region: SharedRegion; bytes: Uint8Array } | null = null;
  /** The mapping under way (or done, or given up). */
  private mapping: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly path: string, maxBytes = SCRATCH_MAX_BYTES) {
    this.spans = new RingSpans(maxBytes);
  }

  /** Whether the service's ring is open here (its mapping done or under way). */
  get isOpen(): boolean {
    return this.ring && !this.closed;
  }

  /** Whether payloads go into a mapping of the service's ring (one copy, no system call). */
  get isMapped(): boolean {
    return this.mapped !== null;
  }

  /**
   * Opens the service's ring, if it made one, and starts mapping it, so that the
   * first payload finds it ready (called when the job makes its first buffer
   * big enough to need it). Resolves when the mapping is done or given up;
   * `write` works meanwhile. Calling it again does nothing.
   */
  async prepare(): Promise<void> {
    if (this.fd === undefined) this.fd = this.openRing() ?? undefined;
    await this.mapping;
  }

  /** Writes `bytes` into free space; returns their offset, or null (full, or the file cannot be used). */
  write(bytes: Uint8Array): number | null {
    if (this.fd === undefined) this.fd = this.openRing() ?? this.createFile();
    if (this.fd === null) return null;
    const offset = this.spans.addUpload(bytes.byteLength);
    if (offset === null) return null;
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
    return offset;
  }

  /** The service has read `bytes` more of what was written: the oldest uploads it covers are free again. */
  consumed(bytes: number): void {
    this.spans.consumed(bytes);
  }

  /** Bytes written and not yet read by the service. */
  get outstanding(): number {
    return this.spans.outstandingBytes;
  }

  /**
   * Space in the service's ring for the service to copy `lengthBytes` of a
   * mapped range into: its offset, held until `release`; null when there is no
   * ring (a file of the job's own is not the service's to write) or no room.
   */
  hold(lengthBytes: number): number | null {
    if (this.fd === undefined) this.fd = this.openRing() ?? undefined;
    if (!this.ring || this.closed) return null;
    return this.spans.addHold(lengthBytes);
  }

  /** Frees the hold at `offset`. */
  release(offset: number): void {
    this.spans.release(offset);
  }

  /**
   * The first `lengthBytes` of the hold at `offset` become an upload (the
   * service reads them from there, as it put them); false when there is no such hold.
   */
  holdToUpload(offset: number, lengthBytes: number): boolean {
    return this.spans.holdToUpload(offset, lengthBytes);
  }

  /** Resolves once the ring's mapping, if one is under way, is done or given up (then `view` gives the ring's own memory). */
  async ready(): Promise<void> {
    await this.mapping;
  }

  /**
   * `lengthBytes` at `offset` of the ring as an ArrayBuffer: the ring's own
   * memory where it is mapped here (`inRing`; detach it with `detachView` when
   * done), else a copy read from the file. Throws once the scratch is closed.
   */
  view(offset: number, lengthBytes: number): { buffer: ArrayBuffer; inRing: boolean } {
    if (lengthBytes === 0) return { buffer: new ArrayBuffer(0), inRing: false };
    if (this.mapped) return { buffer: this.mapped.addon.view(this.mapped.region, offset, lengthBytes), inRing: true };
    if (typeof this.fd !== 'number') throw new Error('the scratch ring is closed');
    const copy = new Uint8Array(lengthBytes);
    for (let at = 0; at < lengthBytes;) {
      const read = readSync(this.fd, copy, at, lengthBytes - at, offset + at);
      if (read === 0) throw new Error(`the scratch ring ended after ${offset + at} bytes`);
      at += read;
    }
    return { buffer: copy.buffer, inRing: false };
  }

  /** Detaches a buffer `view` gave from the ring's own memory (even after `close`). */
  detachView(buffer: ArrayBuffer): void {
    loadSharedMemory().addon?.detach(buffer);
  }

  close(): void {
    this.closed = true;
    // Views of the ring still handed out keep its pages mapped until they are detached or collected (shm.c).
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
      const region = await addon.mapShared(fd, this.spans.limitBytes);
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
      this.spans.limitBytes = Math.min(this.spans.limitBytes, fstatSync(fd).size);
      this.ring = true;
      this.mapping = this.mapRing(fd);
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
