/**
 * ReusedReads over a real Unix socket: each read lands in the same buffer while
 * the reader keeps nothing of it, and in a fresh one after a read it kept; an
 * accepted socket rewrapped around its handle reads the same way, pauses, ends
 * and is counted by its server.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readAcceptedInto, ReusedReads } from '../../../core/platform/reusedReads.js';

let dir: string;
let server: Server | null = null;
let client: Socket | null = null;

afterEach(async () => {
  client?.destroy();
  if (server) await new Promise((resolve) => server!.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A server that writes each of `messages` once the previous one was read (the reader calls `next`). */
async function serve(messages: string[]): Promise<{ path: string; next: () => void }> {
  dir = mkdtempSync(join(tmpdir(), 'salus-reads-'));
  const path = join(dir, 's.sock');
  let peer: Socket | null = null;
  let sent = 0;
  const next = () => { if (peer && sent < messages.length) peer.write(messages[sent++]); };
  server = createServer((socket) => { peer = socket; next(); });
  await new Promise<void>((resolve) => server!.listen(path, resolve));
  return { path, next };
}

describe('ReusedReads', () => {
  it('reads into the same buffer until the reader keeps a read, then into a fresh one', async () => {
    const { path, next } = await serve(['one', 'two', 'three', 'four']);
    const reads = new ReusedReads();
    const seen: { text: string; buffer: ArrayBufferLike; kept: Uint8Array }[] = [];
    const done = new Promise<void>((resolve) => {
      reads.setReader((chunk) => {
        // Keep the second read's bytes (as a reply's payload is kept).
        const keep = seen.length === 1;
        seen.push({ text: Buffer.from(chunk).toString(), buffer: chunk.buffer, kept: chunk });
        if (seen.length === 4) resolve();
        else setTimeout(next, 5);
        return keep;
      });
    });
    client = connect({ path, onread: reads.onread });
    await done;
    expect(seen.map((s) => s.text)).toEqual(['one', 'two', 'three', 'four']);
    expect(seen[1].buffer).toBe(seen[0].buffer);
    expect(seen[2].buffer).not.toBe(seen[1].buffer);
    expect(seen[3].buffer).toBe(seen[2].buffer);
    // The kept read was not written over by the reads after it.
    expect(Buffer.from(seen[1].kept).toString()).toBe('two');
  });

  it('keeps what arrives before a reader is set, and hands it over first', async () => {
    const { path } = await serve(['early']);
    const reads = new ReusedReads();
    client = connect({ path, onread: reads.onread });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const got: string[] = [];
    reads.setReader((chunk) => { got.push(Buffer.from(chunk).toString()); return false; });
    expect(got).toEqual(['early']);
  });

  it('rewraps an accepted socket: reads into one buffer, pauses and resumes, writes, ends, and the server closes after it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'salus-reads-'));
    const path = join(dir, 's.sock');
    const reads = new ReusedReads();
    const got: { text: string; buffer: ArrayBufferLike }[] = [];
    let accepted: Socket | null = null;
    const connected = new Promise<Socket>((resolve) => {
      server = createServer({ pauseOnConnect: true }, (socket) => {
        const wrapped = readAcceptedInto(socket, reads)!;
        reads.setReader((chunk) => {
          got.push({ text: Buffer.from(chunk).toString(), buffer: chunk.buffer });
          wrapped.write(chunk.slice());
          return false;
        });
        accepted = wrapped;
        resolve(wrapped);
      });
    });
    await new Promise<void>((resolve) => server!.listen(path, resolve));
    const echoed: string[] = [];
    client = connect(path);
    client.on('data', (chunk) => echoed.push(chunk.toString()));
    const socket = await connected;
    const roundTrip = async (text: string) => {
      const before = echoed.length;
      client!.write(text);
      await new Promise<void>((resolve) => { const check = () => (echoed.length > before ? resolve() : setTimeout(check, 2)); check(); });
    };
    await roundTrip('one');
    await roundTrip('two');
    // Paused: nothing is read until resumed.
    socket.pause();
    client.write('three');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(got.map((g) => g.text)).toEqual(['one', 'two']);
    socket.resume();
    await new Promise<void>((resolve) => { const check = () => (got.length === 3 ? resolve() : setTimeout(check, 2)); check(); });
    expect(got.map((g) => g.text)).toEqual(['one', 'two', 'three']);
    expect(echoed.join('')).toBe('onetwothree');
    expect(got[1].buffer).toBe(got[0].buffer);
    expect(got[2].buffer).toBe(got[0].buffer);
    // The peer hangs up: the rewrapped socket closes, and the server (which counts it) closes too.
    const closed = new Promise((resolve) => accepted!.once('close', resolve));
    client.end();
    await closed;
    await new Promise((resolve) => server!.close(resolve));
    server = null;
  });
});
