/**
 * A socket's reads into one buffer, reused from read to read (net's `onread`
 * option): no allocation per read, and none of the stream machinery that a
 * `'data'` listener costs (a Buffer per read, the readable's buffering, a
 * `nextTick` after each). On an idle awaited call that is about 3 µs of CPU
 * per round trip on the job's side.
 *
 * The reader is handed a view of the buffer; before it returns it says whether
 * anything still refers to those bytes (a payload it handed on, input its decoder
 * kept). If so, the next read goes to a fresh buffer and the old one is left to
 * whoever holds it; if not, the same buffer is read into again.
 */

import { Socket, type OnReadOpts, type Server } from 'node:net';

/** Bytes one read may bring (as many as a `'data'` listener's reads). */
export const READ_BUFFER_BYTES = 64 * 1024;

/** What a reader returns for a chunk: true when it still refers to the chunk's bytes after the call. */
export type ChunkReader = (chunk: Uint8Array) => boolean;

/**
 * A read buffer: unzeroed memory, viewed as a plain Uint8Array. A Buffer's `subarray` is JavaScript that
 * constructs a Buffer (each read's chunk, each frame's header and payload are views): several times the
 * cost of the typed array's own, before the JIT has compiled it, on every round trip.
 */
function readBuffer(): Uint8Array {
  const memory = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  return new Uint8Array(memory.buffer, memory.byteOffset, memory.byteLength);
}

export class ReusedReads {
  private buffer = readBuffer();
  private held = false;
  private reader: ChunkReader | null = null;
  /** Chunks that arrived before a reader was set, copied. */
  private early: Uint8Array[] = [];

  /** The `onread` option for `net.connect` (or `new net.Socket`). */
  readonly onread: OnReadOpts = {
    buffer: (): Uint8Array => this.nextBuffer(),
    // Never false: that would pause the socket.
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      this.deliver(buffer.subarray(0, bytes));
      return true;
    },
  };

  /** Sets who reads the chunks; those that came before are handed over first. */
  setReader(reader: ChunkReader): void {
    this.reader = reader;
    const early = this.early;
    this.early = [];
    for (const chunk of early) reader(chunk);
  }

  private deliver(chunk: Uint8Array): void {
    if (this.reader) this.held = this.reader(chunk);
    else this.early.push(chunk.slice());
  }

  private nextBuffer(): Uint8Array {
    if (this.held) {
      this.buffer = readBuffer();
      this.held = false;
    }
    return this.buffer;
  }
}

/** What net keeps of a socket's connection and server out of its public API (Node 18–22's lib/net.js). */
interface SocketInternals {
  _handle: object | null;
  _server: Server | null;
  server: Server | null;
}

/**
 * The connection `accepted` holds, rewrapped to read into `reads`' buffer; null, and `accepted` left as it
 * is, when it has no OS handle of its own (one end of an in-memory pair).
 *
 * net's `onread` option exists only for sockets the process constructs, not for those a `net.Server`
 * accepts. So the server is made with `pauseOnConnect` (nothing is read before this), a new Socket is made
 * around the accepted one's handle, and the server's count of its connections moves to it: `server.close()`
 * still waits for this connection, and its end is counted once. The old wrapper lets go of the handle and is
 * left to the garbage collector; only the returned socket is used from then on. Pausing the returned socket
 * stops reading from the OS (net's `pause` for an `onread` socket), so backpressure works as before.
 */
export function readAcceptedInto(accepted: Socket, reads: ReusedReads): Socket | null {
  const old = accepted as unknown as SocketInternals;
  const handle = old._handle;
  if (!handle) return null;
  old._handle = null;
  const socket = new Socket({ handle, onread: reads.onread, allowHalfOpen: accepted.allowHalfOpen } as ConstructorParameters<typeof Socket>[0]);
  const moved = socket as unknown as SocketInternals;
  moved._server = old._server;
  moved.server = old.server;
  old._server = null;
  old.server = null;
  return socket;
}
