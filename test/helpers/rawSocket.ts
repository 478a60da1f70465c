/** Talking to the service on a bare socket, the way a broken or hostile job would. */
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { encodeFrame, FrameDecoder } from '../../core/protocol/frames.js';
import { encodeCommands } from '../../core/protocol/commandCodec.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

/** A raw connection that collects every frame header the service sends. */
export async function rawSocket(path: string): Promise<{ socket: Socket; frames: any[]; closed: Promise<void> }> {
  const socket = connect(path);
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  const decoder = new FrameDecoder();
  const frames: any[] = [];
  socket.on('data', (chunk) => frames.push(...decoder.push(chunk).map((f) => f.header)));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('error', () => undefined);
  return { socket, frames, closed };
}

/**
 * One frame's chunks. A batch may be written as tests think of it, `{t: 'batch', cmds: [...]}`
 * with commands as objects: it is encoded as the wire's binary batch (its command stream
 * first in the payload, then `payload`, which commands' `data` point into).
 */
export function frameChunks(header: unknown, payload: readonly Uint8Array[] = []): Uint8Array[] {
  const batch = header as { t?: unknown; cmds?: unknown } | null;
  if (batch?.t === 'batch' && Array.isArray(batch.cmds)) {
    const { cmds, ...rest } = batch;
    const commands = encodeCommands(cmds as Record<string, unknown>[]);
    return encodeFrame({ ...rest, commandBytes: commands.byteLength }, [commands, ...payload]);
  }
  return encodeFrame(header, payload);
}

/** Writes one frame (a batch of command objects is encoded as frameChunks says). */
export function sendFrame(socket: Socket, header: unknown, payload: Uint8Array[] = []): void {
  for (const chunk of frameChunks(header, payload)) socket.write(chunk);
}

/** Polls `check` (sync or async) until it gives something truthy; fails with `what` after `timeoutMs`. */
export async function until<T>(check: () => T | undefined | null | false | Promise<T | undefined | null | false>, what = 'a condition', timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A raw job connection that has its scratch ring: hello, welcome, then the ring's link in the bulk folder (the
 * service makes its first ring in the background at start, so the job gets it once it is ready).
 */
export async function rawJobWithRing(path: string, name: string): Promise<{ socket: Socket; frames: any[]; welcome: any; link: string }> {
  const { socket, frames } = await rawSocket(path);
  sendFrame(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name });
  const welcome = await until(() => frames.find((f) => f.t === 'welcome'));
  const link = join(welcome.bulkDir, `${welcome.jobId}-s`);
  await until(() => existsSync(link), "the ring's link", 20_000);
  return { socket, frames, welcome, link };
}

/** Resolves once a control call on a fresh connection to `path` is answered (the service still serves); fails after `timeoutMs`. */
export async function controlAnswers(path: string, timeoutMs = 10_000): Promise<void> {
  const control = await rawSocket(path);
  sendFrame(control.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'control' });
  sendFrame(control.socket, { t: 'call', rid: 1, method: 'jobs', params: [] });
  try {
    await until(() => control.frames.find((f) => f.t === 'reply' && f.rid === 1 && Array.isArray(f.result)), 'a control reply', timeoutMs);
  } finally {
    control.socket.destroy();
  }
  await control.closed;
}
