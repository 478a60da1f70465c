/**
 * Length-prefixed frames, the wire format of the service's socket.
 *
 * A frame is `u32le bodyBytes | u32le headerBytes | header (UTF-8 JSON) | payload`,
 * where bodyBytes counts everything after the first field. The header says what the
 * frame is; the payload carries raw bytes (buffer uploads, readbacks) that the
 * header refers to by offset, so large data never travels as JSON or base64.
 *
 * Portable: no Node APIs, so the renderer and tests can use it too.
 */

/** Largest frame either side accepts. Clients split bigger uploads. */
export const MAX_FRAME_BYTES = 256 * 1024 * 1024;

const PREFIX_BYTES = 8;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A decoded frame. `header` is the parsed JSON, or an Error when it was not JSON. */
export interface Frame {
  header: unknown;
  payload: Uint8Array;
}

/** Thrown by the decoder when the stream cannot be framed any more (the peer must be dropped). */
export class FrameError extends Error {
  override name = 'FrameError';
}

/** Makes the buffer a frame's first chunk is encoded into (its every byte is written, so it need not be zeroed). */
export type AllocateBytes = (bytes: number) => Uint8Array;

const newBytes: AllocateBytes = (bytes) => new Uint8Array(bytes);

/**
 * Payloads of at most this many bytes in all are copied into the frame's first chunk, so a
 * small frame (every reply, every batch an await flushes) is one buffer and one write:
 * copying a few KiB costs less than handing the socket several chunks to gather.
 */
export const INLINE_PAYLOAD_BYTES = 16 * 1024;

/**
 * Encodes one frame as a list of chunks to write in order: the prefix and header
 * together, then each payload part as given (not copied) — or, when the payload
 * is at most INLINE_PAYLOAD_BYTES, one chunk holding all of it. `allocate` makes
 * the first chunk (a Node writer passes one that takes from Buffer's pool).
 */
export function encodeFrame(header: unknown, payload: readonly Uint8Array[] = [], allocate: AllocateBytes = newBytes): Uint8Array[] {
  let payloadBytes = 0;
  for (const part of payload) payloadBytes += part.byteLength;
  const inline = payloadBytes <= INLINE_PAYLOAD_BYTES;
  const head = encodeHead(JSON.stringify(header), inline ? payloadBytes : 0, allocate);
  const headerBytes = head.byteLength - PREFIX_BYTES - (inline ? payloadBytes : 0);
  const bodyBytes = 4 + headerBytes + payloadBytes;
  if (bodyBytes + 4 > MAX_FRAME_BYTES) {
    throw new FrameError(`frame of ${bodyBytes + 4} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
  }
  writeU32le(head, 0, bodyBytes);
  writeU32le(head, 4, headerBytes);
  if (inline) {
    let at = PREFIX_BYTES + headerBytes;
    for (const part of payload) {
      head.set(part, at);
      at += part.byteLength;
    }
    return [head];
  }
  const chunks = [head];
  for (const part of payload) if (part.byteLength > 0) chunks.push(part);
  return chunks;
}

/** A frame's first chunk: room for the prefix (left to the caller), `json` as UTF-8, then `tailBytes` (left to the caller). */
function encodeHead(json: string, tailBytes: number, allocate: AllocateBytes): Uint8Array {
  // Sized for ASCII (every reply, every batch header) and encoded in place by one native call: a job's first
  // frames run before the JIT has compiled anything, where a loop over the characters costs microseconds.
  const head = allocate(PREFIX_BYTES + json.length + tailBytes);
  const { read, written } = encoder.encodeInto(json, head.subarray(PREFIX_BYTES, PREFIX_BYTES + json.length));
  if (read === json.length && written === json.length) return head;
  const utf8 = encoder.encode(json);
  const wide = allocate(PREFIX_BYTES + utf8.byteLength + tailBytes);
  wide.set(utf8, PREFIX_BYTES);
  return wide;
}

function readU32le(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

function writeU32le(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = value >>> 24;
}

/** The first buffer for a frame that spans chunks; it doubles as more arrives. */
const FIRST_PARTIAL_BYTES = 64 * 1024;

/**
 * Incremental decoder: feed it chunks as they arrive, get whole frames back.
 * A frame arriving in one chunk is returned as views into that chunk (no copy).
 * A frame spanning chunks is copied, as its chunks arrive, into one buffer that
 * grows (doubling) with what has arrived, so a large upload holds no list of
 * socket reads, and a peer that declares a large frame and sends little makes
 * the decoder hold little: memory follows bytes received, never a length prefix.
 */
export class FrameDecoder {
  private chunks: Uint8Array[] = [];
  private bufferedBytes = 0;
  /** The frame being assembled: a buffer for its first `filled` bytes (room to grow), and its whole size. */
  private partial: { bytes: Uint8Array; filled: number; frameBytes: number } | null = null;

  /** `maxFrameBytes` may be raised later (e.g. once a peer is known); frames past it throw FrameError. */
  constructor(public maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Bytes received but not yet returned as frames. */
  get pendingBytes(): number {
    return this.bufferedBytes + (this.partial?.filled ?? 0);
  }

  /** Whether the decoder keeps references to chunks it was given (bytes of a frame whose length is not known yet). */
  get holdsInput(): boolean {
    return this.chunks.length > 0;
  }

  /** Memory the decoder holds for them: at most about twice `pendingBytes`, whatever a length prefix declared. */
  get heldBytes(): number {
    return this.bufferedBytes + (this.partial?.bytes.byteLength ?? 0);
  }

  /** Adds a chunk; returns the frames it completed. Throws FrameError on an impossible length. */
  push(chunk: Uint8Array): Frame[] {
    // The common case, one whole frame in one read (every reply, every awaited call's batch): no bookkeeping.
    if (!this.partial && this.bufferedBytes === 0 && chunk.byteLength >= PREFIX_BYTES && this.frameBytes(chunk) === chunk.byteLength) {
      return [toFrame(chunk)];
    }
    const frames: Frame[] = [];
    if (this.partial) {
      const partial = this.partial;
      const n = Math.min(chunk.byteLength, partial.frameBytes - partial.filled);
      if (partial.filled + n > partial.bytes.byteLength) {
        const grown = new Uint8Array(Math.min(partial.frameBytes, Math.max(partial.filled + n, partial.bytes.byteLength * 2)));
        grown.set(partial.bytes.subarray(0, partial.filled));
        partial.bytes = grown;
      }
      partial.bytes.set(chunk.subarray(0, n), partial.filled);
      partial.filled += n;
      if (partial.filled < partial.frameBytes) return frames;
      this.partial = null;
      frames.push(toFrame(partial.bytes));
      chunk = chunk.subarray(n);
    }
    if (chunk.byteLength > 0) {
      this.chunks.push(chunk);
      this.bufferedBytes += chunk.byteLength;
    }
    for (;;) {
      if (this.bufferedBytes < PREFIX_BYTES) break;
      const frameBytes = this.frameBytes(this.peek(PREFIX_BYTES));
      if (this.bufferedBytes < frameBytes) {
        // Start assembling: everything buffered belongs to this frame.
        const filled = this.bufferedBytes;
        const bytes = new Uint8Array(Math.min(frameBytes, Math.max(2 * filled, FIRST_PARTIAL_BYTES)));
        bytes.set(this.take(filled));
        this.partial = { bytes, filled, frameBytes };
        break;
      }
      frames.push(toFrame(this.take(frameBytes)));
    }
    return frames;
  }

  /** The size of the frame whose prefix starts `prefix`; throws FrameError when no such frame may be. */
  private frameBytes(prefix: Uint8Array): number {
    const bodyBytes = readU32le(prefix, 0);
    const headerBytes = readU32le(prefix, 4);
    if (bodyBytes + 4 > this.maxFrameBytes) {
      throw new FrameError(`frame of ${bodyBytes + 4} bytes exceeds the ${this.maxFrameBytes}-byte limit`);
    }
    if (headerBytes + 4 > bodyBytes) {
      throw new FrameError(`frame header of ${headerBytes} bytes does not fit its ${bodyBytes}-byte body`);
    }
    return bodyBytes + 4;
  }

  private peek(bytes: number): Uint8Array {
    const first = this.chunks[0];
    if (first.byteLength >= bytes) return first.subarray(0, bytes);
    return this.copyOut(bytes, false);
  }

  private take(bytes: number): Uint8Array {
    const first = this.chunks[0];
    if (first.byteLength >= bytes) {
      const out = first.subarray(0, bytes);
      if (first.byteLength === bytes) this.chunks.shift();
      else this.chunks[0] = first.subarray(bytes);
      this.bufferedBytes -= bytes;
      return out;
    }
    return this.copyOut(bytes, true);
  }

  private copyOut(bytes: number, consume: boolean): Uint8Array {
    const out = new Uint8Array(bytes);
    let filled = 0;
    let index = 0;
    while (filled < bytes) {
      const chunk = this.chunks[index];
      const n = Math.min(chunk.byteLength, bytes - filled);
      out.set(chunk.subarray(0, n), filled);
      filled += n;
      if (consume) {
        if (n === chunk.byteLength) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(n);
      } else {
        index++;
      }
    }
    if (consume) this.bufferedBytes -= bytes;
    return out;
  }
}

/** Splits a whole frame's bytes into its header and payload. */
function toFrame(whole: Uint8Array): Frame {
  const headerBytes = readU32le(whole, 4);
  return { header: parseHeader(whole.subarray(PREFIX_BYTES, PREFIX_BYTES + headerBytes)), payload: whole.subarray(PREFIX_BYTES + headerBytes) };
}

function parseHeader(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(bytes));
  } catch (error) {
    return new Error(`frame header is not UTF-8 JSON: ${(error as Error).message}`);
  }
}
