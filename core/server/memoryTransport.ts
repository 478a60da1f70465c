/**
 * An in-memory transport pair: two connected byte streams that behave, for the
 * service's connection code, like the two ends of its socket (writes on one
 * are reads on the other, `end` half-closes then closes both, as a Unix socket
 * without half-open does). Tests hand one end to `acceptConnection` and speak
 * the protocol on the other, so the service's heart — job table, transitions,
 * control handlers — runs in-process, without spawning `salus serve`. The OS
 * cannot name the peer of such a connection: its job is identified by its
 * hello alone.
 */
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';

/** One end of the pair. */
class MemoryEnd extends Duplex {
  other: MemoryEnd | null = null;

  constructor() {
    // Without half-open, as the service's sockets: an end that hears the other end close closes too.
    super({ allowHalfOpen: false });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.other?.push(chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.other?.push(null);
    callback();
  }

  override _read(): void {
    // Bytes arrive as the other end writes them.
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const other = this.other;
    this.other = null;
    if (other && !other.destroyed) other.destroy();
    callback(error);
  }
}

/** Two connected ends: `service` for `acceptConnection`, `peer` for the test's client. Typed as sockets, which they stand in for. */
export function createTransportPair(): { service: Socket; peer: Socket } {
  const service = new MemoryEnd();
  const peer = new MemoryEnd();
  service.other = peer;
  peer.other = service;
  return { service: service as unknown as Socket, peer: peer as unknown as Socket };
}
