/**
 * The used and free space of a job's scratch (core/client/bulkScratch.ts), as
 * the job sees it. Two kinds of span live there:
 *
 * - uploads: payloads the job wrote for the service to read. They are read in
 *   the order they were written (batch after batch), and the service says how
 *   many bytes it has read (`scratchRead`), so `consumed` frees them from the
 *   oldest on;
 * - holds: space the job lent the service for a readback (a mapped range the
 *   service copies there), kept until the job releases it at unmap, or turned
 *   into an upload (a write-mapped range sent back from where it was read).
 *
 * Space is handed out first-fit, aligned, so a long-held readback does not stop
 * uploads from reusing the space around it. The job is the one allocator of its
 * ring: the service writes only where a command of the job told it to, within
 * the ring it made (core/executor/bulkRead.ts checks that), so the two sides
 * never race for the same bytes.
 */

/** Every span starts at a multiple of this (a view of a span suits any typed array). */
export const SPAN_ALIGN_BYTES = 8;

interface Span {
  start: number;
  end: number;
}

export class RingSpans {
  /** Live spans of both kinds, by start. */
  private readonly live: Span[] = [];
  /** Live uploads, oldest first: the service reads them in this order. */
  private readonly uploads: Span[] = [];
  /** Holds, by start. */
  private readonly holds = new Map<number, Span>();
  /** Bytes the service said it read that did not yet cover the oldest upload. */
  private creditBytes = 0;

  /** `limitBytes`: the scratch's size; no span reaches past it. */
  constructor(public limitBytes: number) {}

  /** Bytes of uploads written and not yet read by the service. */
  get outstandingBytes(): number {
    return this.uploads.reduce((sum, span) => sum + span.end - span.start, 0) - this.creditBytes;
  }

  /** Space for an upload of `lengthBytes`: its offset, or null when no gap is big enough. */
  addUpload(lengthBytes: number): number | null {
    const span = this.place(lengthBytes);
    if (span) this.uploads.push(span);
    return span ? span.start : null;
  }

  /** Space held for a readback of `lengthBytes` until `release` (or `holdToUpload`): its offset, or null. */
  addHold(lengthBytes: number): number | null {
    const span = this.place(lengthBytes);
    if (span) this.holds.set(span.start, span);
    return span ? span.start : null;
  }

  /** Whether `offset` starts a hold. */
  isHeld(offset: number): boolean {
    return this.holds.has(offset);
  }

  /** Frees the hold at `offset` (unknown offsets are ignored). */
  release(offset: number): void {
    const span = this.holds.get(offset);
    if (!span) return;
    this.holds.delete(offset);
    this.remove(span);
  }

  /**
   * The hold at `offset` becomes an upload of its first `lengthBytes` (the rest
   * is freed): the job sends bytes from where the service put them. False when
   * there is no such hold.
   */
  holdToUpload(offset: number, lengthBytes: number): boolean {
    const span = this.holds.get(offset);
    if (!span || lengthBytes > span.end - span.start) return false;
    this.holds.delete(offset);
    span.end = span.start + lengthBytes;
    if (lengthBytes === 0) this.remove(span);
    else this.uploads.push(span);
    return true;
  }

  /** The service has read `bytes` more of the uploads: the oldest it covers are freed. */
  consumed(bytes: number): void {
    this.creditBytes += bytes;
    while (this.uploads.length > 0 && this.creditBytes >= this.uploads[0].end - this.uploads[0].start) {
      const span = this.uploads.shift()!;
      this.creditBytes -= span.end - span.start;
      this.remove(span);
    }
    if (this.uploads.length === 0) this.creditBytes = 0;
  }

  /** The first gap that fits `lengthBytes` (aligned), taken; null if none does. */
  private place(lengthBytes: number): Span | null {
    if (!(lengthBytes > 0)) return null;
    let at = 0;
    let index = 0;
    for (; index <= this.live.length; index++) {
      const next = index < this.live.length ? this.live[index].start : this.limitBytes;
      if (at + lengthBytes <= next) break;
      if (index < this.live.length) at = align(this.live[index].end);
    }
    if (at + lengthBytes > this.limitBytes) return null;
    const span = { start: at, end: at + lengthBytes };
    this.live.splice(index, 0, span);
    return span;
  }

  private remove(span: Span): void {
    const index = this.live.indexOf(span);
    if (index >= 0) this.live.splice(index, 1);
  }
}

function align(offset: number): number {
  return Math.ceil(offset / SPAN_ALIGN_BYTES) * SPAN_ALIGN_BYTES;
}
