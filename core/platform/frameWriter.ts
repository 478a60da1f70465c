/**
 * Writes one frame to a socket in one system call.
 *
 * A frame is several chunks (prefix + header, then the payload parts, not
 * copied); written one by one they would cost a syscall each and wake the peer
 * once per chunk, to find half a frame. Corked, they leave as one `writev`.
 * Frames are not held back to coalesce with later ones: a batch must reach the
 * service while the job goes on recording.
 */
import type { Socket } from 'node:net';

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
