/**
 * A mapped range read back through the job's scratch ring (the service's side:
 * core/executor/ringReadback.ts). At `mapAsync` the job holds space in its ring
 * for the whole range and names it in the command; the service copies the
 * mapped bytes there, and `getMappedRange` hands out ArrayBuffers over the
 * ring's own memory: no copy in the job, where the shared-memory addon maps the
 * ring here (else each range is read from the ring's file, one copy).
 *
 * As WebGPU wants, every ArrayBuffer handed out is detached at unmap, destroy
 * and device.destroy() (the addon detaches views of the ring; shm.c keeps the
 * ring's pages mapped while any view lives, so a view can never outlive them).
 * The space is given back once the range is unmapped and the service has
 * answered (it writes nothing after its reply); a write-mapped range's bytes are
 * sent back from where they are, as a scratch reference, with no copy either.
 */
import type { ServiceConnection } from '../connection.js';
import type { BulkScratch } from '../bulkScratch.js';
import type { DataRef } from '../../protocol/commands.js';
import { BULK_MIN_BYTES } from '../../platform/bulkDir.js';

/**
 * Mapped ranges from this size up come through the ring once the job has it
 * open; smaller ones ride in the reply. Measured (SwiftShader, a 2-core machine,
 * mapAsync + getMappedRange + unmap): up to 16 KiB both take the same (the
 * round trip, ~0.2–0.4 ms); at 64 KiB the ring takes 0.23–0.38 ms against
 * 0.45–0.83 ms; at 1 MiB 0.3–0.5 against 3.9–4.9 ms.
 */
export const RING_READBACK_MIN_BYTES = 64 * 1024;

/** From this size up a mapped range opens (and maps) the job's ring if nothing did yet: then it always pays. */
export const RING_OPEN_MIN_BYTES = BULK_MIN_BYTES;

export class RingHold {
  #answered = false;
  #unmapped = false;
  #released = false;

  private constructor(private readonly scratch: BulkScratch, readonly offset: number, readonly sizeBytes: number) {}

  /** Space for a mapped range of `sizeBytes`, or null: too small to be worth it, no ring, or no room in it. */
  static take(connection: ServiceConnection, sizeBytes: number): RingHold | null {
    if (sizeBytes < RING_READBACK_MIN_BYTES) return null;
    const scratch = connection.bulkScratch();
    // A job that never moves 1 MiB at once never maps its 256 MiB ring for a smaller range.
    if (sizeBytes < RING_OPEN_MIN_BYTES && !scratch?.isOpen) return null;
    const offset = scratch?.hold(sizeBytes) ?? null;
    return scratch && offset !== null ? new RingHold(scratch, offset, sizeBytes) : null;
  }

  /** The ring offset of the range's byte `at` (relative to the mapped range). */
  at(at: number): number {
    return this.offset + at;
  }

  /** The service answered (bytes or an error): after this it writes nothing here, and the space may go back at unmap. */
  answered(): void {
    this.#answered = true;
    this.#releaseIfDone();
  }

  /** Waits until views of the ring are its own memory (its mapping here, if one is under way, is done). */
  ready(): Promise<void> {
    return this.scratch.ready();
  }

  /** `sizeBytes` at `at` of the mapped range (relative to it), as an ArrayBuffer (see BulkScratch.view). */
  view(at: number, sizeBytes: number): { buffer: ArrayBuffer; inRing: boolean } {
    return this.scratch.view(this.offset + at, sizeBytes);
  }

  /** Detaches a view from `view` that is the ring's own memory. */
  detachView(buffer: ArrayBuffer): void {
    this.scratch.detachView(buffer);
  }

  /**
   * At unmap of a write-mapped range whose views were the ring's memory: the
   * space becomes an upload, and `[at, at + sizeBytes)` of it (relative to the
   * mapped range) is named for the service to read back. Null when the space is
   * not there to send from (the caller then sends the bytes another way).
   */
  sendBack(connection: ServiceConnection, at: number, sizeBytes: number): DataRef | null {
    if (!this.#released && this.#answered && !this.#unmapped) {
      // The whole range goes up once, as one upload; each handed-out range names its part of it.
      if (!this.scratch.holdToUpload(this.offset, this.sizeBytes)) return null;
      this.#released = true;
      connection.attachScratch(this.offset, this.sizeBytes);
    }
    return this.#released ? { scratch: this.offset + at, length: sizeBytes } : null;
  }

  /** The range is unmapped (or never mapped): the space goes back once the service has answered. */
  unmapped(): void {
    this.#unmapped = true;
    this.#releaseIfDone();
  }

  #releaseIfDone(): void {
    if (this.#released || !this.#answered || !this.#unmapped) return;
    this.#released = true;
    this.scratch.release(this.offset);
  }
}
