/**
 * GPUBuffer for a job. Mapping is mirrored: `mapAsync` brings the mapped range's
 * bytes over once the service's real buffer is mapped (in DATA_CHUNK_BYTES
 * pieces, requested together): a large range into the job's scratch ring, where
 * `getMappedRange` hands out views of it (./ringHold.ts), a small one in the
 * replies, which `getMappedRange` hands out copies of; `unmap` sends back what
 * the job wrote to write-mapped ranges and detaches the ArrayBuffers it handed
 * out, as a browser does.
 */
import { markAsUntransferable } from 'node:worker_threads';
import { RemoteObject } from './base.js';
import { GPUMapMode } from './constants.js';
import { DATA_CHUNK_BYTES } from '../../protocol/commands.js';
import { optionalSize64, size64, uint32 } from './webidl.js';
import type { DeviceChannel } from './channel.js';
import { RING_OPEN_MIN_BYTES, RingHold } from './ringHold.js';

interface Mapping {
  mode: number;
  offset: number;
  /** The mapped range's bytes; null for a buffer mapped at creation (all zeros), or one read back through the ring. */
  bytes: Uint8Array | null;
  size: number;
  /** Ranges handed out by getMappedRange, relative to the buffer; `inRing`: a view of the ring's own memory. */
  ranges: Array<{ offset: number; buffer: ArrayBuffer; inRing?: boolean }>;
  /** Where the bytes are in the job's scratch ring, when they came that way. */
  ring: RingHold | null;
}

/** Detaches the ranges a mapping handed out, and gives its ring space back (at unmap, destroy, device.destroy()). */
function endRanges(mapping: Mapping | null): void {
  for (const range of mapping?.ranges ?? []) {
    if (range.inRing) mapping!.ring!.detachView(range.buffer);
    detach(range.buffer);
  }
  mapping?.ring?.unmapped();
}

/**
 * Detaches `buffer` (the job's view of a mapped range dies at unmap) and returns
 * its memory as a new ArrayBuffer without copying; null when the job already
 * detached it (e.g. transferred it away).
 */
function detach(buffer: ArrayBuffer): ArrayBuffer | null {
  let owned: ArrayBuffer | null = null;
  try {
    if (buffer.byteLength > 0) owned = structuredClone(buffer, { transfer: [buffer] });
  } catch {
    owned = null;
  }
  // As a local device's mapped ranges (which cannot be transferred), a job's later attempt to
  // transfer the detached buffer throws a DataCloneError (Node 20 would otherwise let it pass).
  markAsUntransferable(buffer);
  return owned;
}

/** Mappings at creation from this size up are allocated once at createBuffer, to throw as a local device does. */
const ALLOCATION_PROBE_BYTES = 256 * 1024 * 1024;

/** Whether this process can allocate an ArrayBuffer of `size` bytes (its pages are touched only when used). */
function canAllocate(size: number): boolean {
  try {
    new ArrayBuffer(size);
    return true;
  } catch {
    return false;
  }
}

export class RemoteBuffer extends RemoteObject {
  readonly #size: number;
  readonly #usage: number;
  #mapState: GPUBufferMapState = 'unmapped';
  #mapping: Mapping | null = null;
  #pendingReject: ((error: Error) => void) | null = null;
  #destroyed = false;
  #forgetMapping: (() => void) | null = null;

  constructor(channel: DeviceChannel, id: number, descriptor: GPUBufferDescriptor) {
    const size = size64(descriptor.size, 'createBuffer: size');
    const usage = uint32(descriptor.usage, 'createBuffer: usage');
    if (descriptor.mappedAtCreation && size % 4 !== 0) {
      throw new RangeError(`createBuffer: a buffer mapped at creation needs a size that is a multiple of 4, not ${size}`);
    }
    // A local device allocates the mapping's memory now and throws a RangeError when it cannot. Only a large
    // mapping is tried here (an ordinary upload's would only add work for the garbage collector).
    if (descriptor.mappedAtCreation && size >= ALLOCATION_PROBE_BYTES && !canAllocate(size)) {
      throw new RangeError(`createBuffer: cannot allocate ${size} bytes to map the buffer at creation`);
    }
    super(channel, id, descriptor.label);
    this.#size = size;
    this.#usage = usage;
    channel.record({
      op: 'createBuffer', id, size, usage,
      mappedAtCreation: descriptor.mappedAtCreation || undefined, label: descriptor.label,
    });
    // Bytes of this size go through the scratch ring: have it mapped by the time they come.
    if (size >= RING_OPEN_MIN_BYTES && !channel.deviceLost) void channel.connection.bulkScratch()?.prepare();
    if (descriptor.mappedAtCreation) {
      this.#mapState = 'mapped';
      this.#mapping = { mode: GPUMapMode.WRITE, offset: 0, bytes: null, size: this.size, ranges: [], ring: null };
      this.#untilDeviceDestroyed();
    }
  }

  /** A local device's destroy() unmaps its mapped buffers: their ranges are detached. */
  #untilDeviceDestroyed(): void {
    this.#forgetMapping = this.channel.untilDestroyed(() => {
      endRanges(this.#mapping);
      this.#mapping = null;
      this.#mapState = 'unmapped';
      this.#forgetMapping = null;
    });
  }

  /** Ends the mapping's watch on device.destroy() (at unmap and destroy). */
  #endMapping(): void {
    this.#forgetMapping?.();
    this.#forgetMapping = null;
  }

  get size(): number { return this.#size; }

  get usage(): number { return this.#usage; }

  get mapState(): GPUBufferMapState { return this.#mapState; }

  async mapAsync(modeArg: number, offsetArg = 0, sizeArg?: number): Promise<undefined> {
    const [mode, offset, size] = [uint32(modeArg, 'mapAsync: mode'), size64(offsetArg, 'mapAsync: offset'), optionalSize64(sizeArg, 'mapAsync: size')];
    const channel = this.channel;
    const rid = channel.allocateRid();
    const reply = channel.expectReply(rid);
    const ring = this.#mapState === 'unmapped' && !channel.deviceLost ? RingHold.take(channel.connection, size ?? Math.max(0, this.size - offset)) : null;
    channel.record({ op: 'mapAsync', rid, id: this.id, mode, offset, size, ring: ring?.offset });
    channel.flush();
    if (this.#mapState !== 'unmapped') {
      // The service reports the validation error; the promise rejects once it has, as on a local device.
      const state = this.#mapState;
      await reply.catch(() => undefined);
      throw new DOMException(`mapAsync on a buffer that is ${state}`, 'OperationError');
    }
    this.#mapState = 'pending';
    const aborted = new Promise<never>((_, reject) => { this.#pendingReject = reject; });
    // A local device's destroy() aborts its pending maps at once.
    const forget = channel.untilDestroyed(() => this.#pendingReject?.(new DOMException('the device was destroyed before mapAsync finished', 'AbortError')));
    // The ring space goes back once the service answered everything and the range is unmapped (or never mapped).
    let wanted = true;
    const answered = ring ? this.#readRing(reply, ring, () => wanted) : null;
    // Its failure is the race's below; after an abort nobody else awaits it.
    answered?.catch(() => undefined);
    try {
      let bytes: Uint8Array | null = null;
      let mapped: { offset: number; size: number };
      if (ring) {
        mapped = await Promise.race([answered!, aborted]);
      } else {
        const { result, payload } = await Promise.race([reply, aborted]);
        mapped = result as { offset: number; size: number };
        // Own the bytes: the payload is a view into a socket chunk shared with other frames
        // (and may be a Buffer, whose slice() would not copy).
        bytes = new Uint8Array(mapped.size);
        bytes.set(payload);
        if (payload.byteLength < mapped.size) await Promise.race([this.#readRest(mapped, bytes, payload.byteLength), aborted]);
      }
      this.#mapping = { mode, offset: mapped.offset, bytes, size: mapped.size, ranges: [], ring };
      this.#mapState = 'mapped';
      this.#untilDeviceDestroyed();
      return undefined;
    } catch (error) {
      wanted = false;
      if (this.#mapState === 'pending') this.#mapState = 'unmapped';
      ring?.unmapped();
      if (error instanceof DOMException) throw error;
      // On a lost device a mapping aborts, as on a local one.
      throw new DOMException((error as Error).message, channel.deviceLost ? 'AbortError' : 'OperationError');
    } finally {
      this.#pendingReject = null;
      forget();
    }
  }

  /**
   * The mapped range read into `ring`: the first piece comes with the reply, the
   * rest is asked for at once. Resolves with the reply's `{offset, size}` once
   * every piece is there and the ring's mapping here is ready; tells `ring` when
   * the service has answered everything (failed or not). `wanted` turns false
   * when the map was aborted.
   */
  async #readRing(reply: Promise<{ result: unknown }>, ring: RingHold, wanted: () => boolean): Promise<{ offset: number; size: number }> {
    try {
      const mapped = (await reply).result as { offset: number; size: number; ring?: number };
      if (mapped.ring !== ring.offset) throw new Error('salus: the service did not read the mapped range back into the scratch ring');
      // Unmapped or destroyed meanwhile: the rest is not asked for (the service's range is gone too).
      if (!wanted()) return mapped;
      const pieces: Array<Promise<unknown>> = [ring.ready()];
      for (let at = DATA_CHUNK_BYTES; at < mapped.size; at += DATA_CHUNK_BYTES) {
        const rid = this.channel.allocateRid();
        pieces.push(this.channel.expectReply(rid));
        const size = Math.min(DATA_CHUNK_BYTES, mapped.size - at);
        this.channel.record({ op: 'readMapped', rid, id: this.id, offset: mapped.offset + at, size, ring: ring.at(at) });
      }
      this.channel.flush();
      // Every reply, not only the first failure: the service may write until it has answered them all.
      const settled = await Promise.allSettled(pieces);
      const failed = settled.find((piece) => piece.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return mapped;
    } finally {
      ring.answered();
    }
  }

  /** Fetches the pieces of a large mapped range after the first, all requested at once. */
  async #readRest(mapped: { offset: number; size: number }, bytes: Uint8Array, from: number): Promise<void> {
    const pieces: Array<Promise<void>> = [];
    for (let at = from; at < mapped.size; at += DATA_CHUNK_BYTES) {
      const rid = this.channel.allocateRid();
      const size = Math.min(DATA_CHUNK_BYTES, mapped.size - at);
      pieces.push(this.channel.expectReply(rid).then(({ payload }) => bytes.set(payload, at)));
      this.channel.record({ op: 'readMapped', rid, id: this.id, offset: mapped.offset + at, size });
    }
    this.channel.flush();
    await Promise.all(pieces);
  }

  getMappedRange(offsetArg = 0, sizeArg?: number): ArrayBuffer {
    const [offset, size] = [size64(offsetArg, 'getMappedRange: offset'), optionalSize64(sizeArg, 'getMappedRange: size')];
    const mapping = this.#mapping;
    if (this.#mapState !== 'mapped' || !mapping) {
      throw new DOMException('getMappedRange on a buffer that is not mapped', 'OperationError');
    }
    const end = mapping.offset + mapping.size;
    // As in WebGPU, the default size runs to the end of the buffer, not of the mapped range.
    const rangeSize = size ?? Math.max(0, this.size - offset);
    if (offset % 8 !== 0 || rangeSize % 4 !== 0 || offset < mapping.offset || offset + rangeSize > end) {
      throw new DOMException(`getMappedRange(${offset}, ${rangeSize}) is outside the mapped range [${mapping.offset}, ${end}) or misaligned`, 'OperationError');
    }
    for (const range of mapping.ranges) {
      if (offset < range.offset + range.buffer.byteLength && range.offset < offset + rangeSize) {
        throw new DOMException('getMappedRange ranges overlap', 'OperationError');
      }
    }
    const start = offset - mapping.offset;
    if (mapping.ring) {
      const { buffer, inRing } = mapping.ring.view(start, rangeSize);
      mapping.ranges.push({ offset, buffer, inRing });
      return buffer;
    }
    const buffer = new ArrayBuffer(rangeSize);
    if (mapping.bytes) new Uint8Array(buffer).set(mapping.bytes.subarray(start, start + rangeSize));
    mapping.ranges.push({ offset, buffer });
    return buffer;
  }

  unmap(): undefined {
    if (this.#mapState === 'pending') {
      this.#pendingReject?.(new DOMException('the buffer was unmapped before mapAsync finished', 'AbortError'));
      this.#mapState = 'unmapped';
      this.channel.record({ op: 'unmap', id: this.id });
      return undefined;
    }
    const mapping = this.#mapping;
    this.#mapping = null;
    this.#endMapping();
    if (this.#mapState !== 'mapped' || !mapping) {
      this.channel.record({ op: 'unmap', id: this.id });
      return undefined;
    }
    this.#mapState = 'unmapped';
    for (const range of mapping.ranges) {
      if (range.inRing) {
        // The job wrote into the ring itself: the service reads the bytes from there.
        // A range the job transferred away itself (already detached) sends nothing, as below.
        const size = range.buffer.byteLength;
        if (size > 0 && mapping.mode & GPUMapMode.WRITE) {
          const data = mapping.ring!.sendBack(this.channel.connection, range.offset - mapping.offset, size)
            ?? this.channel.attach(new Uint8Array(range.buffer), true);
          this.channel.record({ op: 'writeMapped', id: this.id, offset: range.offset, data });
        }
        mapping.ring!.detachView(range.buffer);
        detach(range.buffer);
        continue;
      }
      // Detaching hands us the job's bytes without a copy; they are ours to send.
      const owned = detach(range.buffer);
      if (!owned || !(mapping.mode & GPUMapMode.WRITE)) continue;
      for (let at = 0; at < owned.byteLength; at += DATA_CHUNK_BYTES) {
        const piece = new Uint8Array(owned, at, Math.min(DATA_CHUNK_BYTES, owned.byteLength - at));
        this.channel.record({ op: 'writeMapped', id: this.id, offset: range.offset + at, data: this.channel.attach(piece) });
      }
    }
    mapping.ring?.unmapped();
    this.channel.record({ op: 'unmap', id: this.id });
    return undefined;
  }

  /**
   * Tells the service that the buffer's contents are dead while the job keeps it (its framework put it back
   * in its own pool), so the memory can serve others until the buffer's next use. Not part of GPUBuffer:
   * framework adapters call it (core/client/adapters). False when it does not apply (mapped, destroyed).
   */
  static discardContents(buffer: RemoteBuffer): boolean {
    if (buffer.#destroyed || buffer.#mapState !== 'unmapped') return false;
    buffer.channel.record({ op: 'discard', id: buffer.id });
    return true;
  }

  destroy(): undefined {
    if (this.#destroyed) return undefined;
    if (this.#mapState !== 'unmapped') {
      const mapping = this.#mapping;
      this.#pendingReject?.(new DOMException('the buffer was destroyed before mapAsync finished', 'AbortError'));
      this.#mapping = null;
      this.#mapState = 'unmapped';
      endRanges(mapping);
    }
    this.#endMapping();
    this.#destroyed = true;
    this.channel.record({ op: 'destroy', id: this.id });
    return undefined;
  }
}
