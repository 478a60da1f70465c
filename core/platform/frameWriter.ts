/**
 * Writes one frame to a socket in one system call.
 *
 * A small frame is encoded into one buffer from Buffer's pool (frames.ts copies a
 * small payload in), so it leaves as one plain write: no zeroed allocation, no
 * conversion of a typed array into a Buffer, no gathering. A large frame is
 * several chunks (prefix + header, then the payload parts, not copied); written
 * one by one they would cost a syscall each and wake the peer once per chunk, to
 * find half a frame. Corked, they leave as one `writev`. Frames are not held back
 * to coalesce with later ones: a batch must reach the service while the job goes
 * on recording.
 */
import type { Socket } from 'node:net';
import { encodeFrame, type AllocateBytes } from '../protocol/frames.js';

/** Every byte of a frame's first chunk is written by the encoder: the pool's unzeroed memory will do. */
const fromPool: AllocateBytes = (bytes) => Buffer.allocUnsafe(bytes);

/** Encodes a frame of `header` and `payload` (see encodeFrame) and writes it to `socket`. */
export function sendFrame(socket: Socket, header: unknown, payload: readonly Uint8Array[] = []): void {
  writeFrame(socket, encodeFrame(header, payload, fromPool));
}

/** Writes `chunks` (one encoded frame) to `socket` together. */
export function writeFrame(socket: Socket, chunks: readonly Uint8Array[]): void {
  if (chunks.length === 1) {
    socket.write(chunks[0]);
    return;
  }
  socket.cork();
  for (const chunk of chunks) socket.write(chunk);
  socket.uncork();
}
