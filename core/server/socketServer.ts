/**
 * The service's socket: a Unix domain socket (a named pipe on Windows) private
 * to its user. Each connection says hello first; jobs then send batches and
 * requests, control clients send calls (and may subscribe to events). A bad
 * frame or message gets a clear error back; only a stream that cannot be framed
 * any more is dropped, and then only that connection.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { chmodSync, unlinkSync, existsSync, lstatSync } from 'node:fs';
import { FrameDecoder, FrameError, MAX_FRAME_BYTES } from '../protocol/frames.js';
import { decodeCommands, requestIds } from '../protocol/commandCodec.js';
import { readBatchHeader, type BatchHeader } from '../protocol/batchHeader.js';
import { isRequestId } from '../protocol/commands.js';
import {
  callSchema, describeZodError, ErrorCode, helloSchema, jobMessageSchema, PROTOCOL_VERSION,
  type ServerMessage,
} from '../protocol/messages.js';
import { prepareSocketDir } from '../platform/socketPath.js';
import { sendFrame } from '../platform/frameWriter.js';
import { ReusedReads, readAcceptedInto } from '../platform/reusedReads.js';
import { QuickTurns } from '../platform/quickTurns.js';
import { ControlError, SERVICE_VERSION, type SalusService } from '../service/service.js';
import { runControl, type ControlTarget } from '../service/control.js';
import type { JobRecord } from '../service/jobRecord.js';
import type { ServiceEvent } from '../protocol/api.js';
import { FINAL_STATES } from '../protocol/state.js';
import { peerPid, verifiedPids, watchPeer, type PeerSocket } from './peerProcess.js';
import { ConnectionFlow, DROP_GRACE_MS, NOTHING_HELD } from './connectionLimits.js';

/**
 * Largest frame a connection may send before its hello is accepted: a hello is
 * a few hundred bytes, and a stranger must not make the service allocate what a
 * length prefix declares.
 */
export const HELLO_MAX_FRAME_BYTES = 64 * 1024;
/** The data of a batch that carries none. */
const NO_BYTES = new Uint8Array(0);
/** A subscriber this far behind (bytes unsent) misses events until it drains. */
const SUBSCRIBER_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Whether something already listens at `path` (a live service). */
function isListening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path);
    probe.once('connect', () => { probe.destroy(); resolve(true); });
    probe.once('error', () => resolve(false));
  });
}

/**
 * Listens at `socketPath`; refuses to start when another service is live there
 * or when the path is something other than a socket (a user's file is never
 * removed), and removes a stale socket file.
 */
export async function listenSocket(target: ControlTarget, socketPath: string): Promise<Server> {
  prepareSocketDir(socketPath);
  if (process.platform !== 'win32' && existsSync(socketPath)) {
    if (!lstatSync(socketPath).isSocket()) {
      throw new Error(`salus: ${socketPath} exists and is not a socket; it is left as it is. Pass --socket with a new path (e.g. ${socketPath}.sock).`);
    }
    if (await isListening(socketPath)) {
      throw new Error(`salus: a service is already listening at ${socketPath}. Stop it first, or pass --socket PATH.`);
    }
    unlinkSync(socketPath);
  }
  // Paused on connect: each connection is rewrapped to read into one reused buffer before its first read.
  const server = createServer({ pauseOnConnect: true }, (accepted) => {
    const reads = new ReusedReads();
    const socket = readAcceptedInto(accepted, reads);
    if (socket) return acceptConnection(target, socket, socketPath, reads);
    acceptConnection(target, accepted, socketPath);
    accepted.resume();
  });
  // listen() creates the socket with the umask's mode: make it 0600 from its first moment, not just after.
  const previousUmask = process.platform === 'win32' ? null : process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => { server.off('error', reject); resolve(); });
    });
  } finally {
    if (previousUmask !== null) process.umask(previousUmask);
  }
  if (process.platform !== 'win32') chmodSync(socketPath, 0o600);
  return server;
}

/**
 * Serves one connection accepted at `endpoint`: a real socket, or one end of
 * an in-memory transport pair (memoryTransport.ts) in tests. With `reads`, the
 * socket's reads arrive there (a socket made with its `onread`); else through
 * its `'data'` events.
 */
export function acceptConnection(target: ControlTarget, socket: Socket, endpoint: string, reads?: ReusedReads): void {
  new Connection(target, socket, endpoint, reads);
}

class Connection {
  private readonly decoder = new FrameDecoder(HELLO_MAX_FRAME_BYTES);
  private job: JobRecord | null = null;
  private role: 'job' | 'control' | null = null;
  private unsubscribe: (() => void) | null = null;
  /** The peer's bytes can no longer be framed: whatever else it sends is ignored until it is dropped. */
  private unframeable = false;
  private readonly flow: ConnectionFlow;
  /** Who is at the other end, from the OS (core/server/peerProcess.ts). */
  private readonly identifyPeer: () => Promise<PeerSocket | null>;
  /** How soon the peer asks again after a reply: a job in a loop of awaited calls finds the service awake. */
  private readonly turns = new QuickTurns();

  private readonly service: SalusService;

  constructor(private readonly target: ControlTarget, private readonly socket: Socket, endpoint: string, reads?: ReusedReads) {
    this.service = target.service;
    this.identifyPeer = watchPeer(socket, endpoint);
    this.flow = new ConnectionFlow(socket, () => this.job?.session?.held ?? NOTHING_HELD, (message) => this.drop(message));
    if (reads) reads.setReader((chunk) => this.onData(chunk));
    else socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.onClose());
  }

  send(message: ServerMessage, payload: Uint8Array[] = []): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    sendFrame(this.socket, message, payload);
    const reply = message.t === 'reply';
    this.flow.sent(reply);
    if (reply) this.turns.sent();
  }

  /** The peer passed a hard limit (connectionLimits.ts): told why, its job failed, and dropped. */
  private drop(message: string): void {
    this.fail(ErrorCode.LimitExceeded, `${message}; closing the connection`);
    if (this.job) this.service.failJob(this.job, message);
    this.socket.end();
    // Its unread replies are what it is dropped for: free them once it had a moment to read why.
    setTimeout(() => this.socket.destroy(), DROP_GRACE_MS).unref();
  }

  private fail(code: number, message: string): void {
    this.service.log(`salus: ${this.job?.id ?? 'connection'}: ${message}`);
    this.send({ t: 'error', code, message });
  }

  /** Handles one read; returns whether anything still refers to `chunk`'s bytes (see ReusedReads). */
  private onData(chunk: Uint8Array): boolean {
    if (this.unframeable) return false;
    this.turns.received();
    let frames;
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      // The stream cannot be framed any more: tell the peer why, then drop it. Destroying the socket at
      // once would discard the error frame whenever replies are still queued on it, so it ends (after
      // what is queued) and is destroyed only if the peer has not hung up within the grace period.
      this.unframeable = true;
      this.fail(ErrorCode.BadFrame, `${(error as FrameError).message}; closing the connection`);
      this.socket.end();
      setTimeout(() => this.socket.destroy(), DROP_GRACE_MS).unref();
      return false;
    }
    let held = this.decoder.holdsInput;
    for (const frame of frames) {
      if (frame.header instanceof Error) {
        this.fail(ErrorCode.BadFrame, frame.header.message);
        continue;
      }
      // A batch's data is handed to the session as a view of the read, which may replay it later.
      if (this.onMessage(frame.header, frame.payload) && frame.payload.buffer === chunk.buffer) held = true;
    }
    return held;
  }

  /** Handles one message; returns whether its payload was handed on (the caller must not reuse those bytes). */
  private onMessage(header: unknown, payload: Uint8Array): boolean {
    if (!this.role) {
      this.onHello(header);
      return false;
    }
    if (this.role === 'control') {
      void this.onCall(header);
      return false;
    }
    if (this.job && FINAL_STATES.includes(this.job.state)) {
      this.refuseEnded(header);
      return false;
    }
    const batch = readBatchHeader(header);
    if (batch) return this.onBatch(batch, payload);
    const parsed = jobMessageSchema.safeParse(header);
    if (!parsed.success) {
      const message = `bad message: ${describeZodError(parsed.error)}`;
      // A request (a requestDevice with a wrong field) still gets its one reply, or its caller waits forever.
      const rid = (header as { rid?: unknown } | null)?.rid;
      if (isRequestId(rid)) this.send({ t: 'reply', rid, error: { code: ErrorCode.BadMessage, message } });
      this.fail(ErrorCode.BadMessage, message);
      return false;
    }
    const wire = parsed.data;
    if (wire.t === 'batch') return this.onBatch(wire, payload);
    const replayed = this.service.handleJobMessage(this.job!, wire, payload);
    this.flow.track(0, payload.byteLength, wire.t === 'requestDevice' ? 1 : 0, replayed);
    return payload.byteLength > 0;
  }

  /**
   * A job's batch: its commands decoded and checked, handed to its session with the data after them.
   * Returns whether it carried data (handed on as a view of `payload`).
   */
  private onBatch(wire: BatchHeader, payload: Uint8Array): boolean {
    if (wire.commandBytes > payload.byteLength) {
      this.fail(ErrorCode.BadMessage, `bad message: a batch says its commands take ${wire.commandBytes} bytes of a ${payload.byteLength}-byte payload`);
      return false;
    }
    // A batch of commands alone (every awaited call's) needs no views cut from its payload.
    const commandsOnly = wire.commandBytes === payload.byteLength;
    const batch = decodeCommands(commandsOnly ? payload : payload.subarray(0, wire.commandBytes));
    const data = commandsOnly ? NO_BYTES : payload.subarray(wire.commandBytes);
    const replayed = this.service.handleJobMessage(this.job!, { t: 'batch', batch }, data);
    const commands = batch.cmds.length + batch.malformed.length;
    this.flow.track(commands, data.byteLength, requestIds(batch).length, replayed);
    const scratchBytes = wire.scratchBytes ?? 0;
    if (scratchBytes > 0) {
      // Replayed (or refused, or failed): either way the service is done with those bytes.
      const done = () => this.send({ t: 'scratchRead', bytes: scratchBytes });
      if (replayed) void replayed.then(done, done);
      else done();
    }
    return data.byteLength > 0;
  }

  /**
   * A message for a job that has ended (killed, failed, refused): it is never
   * re-admitted on the same connection, whatever it asks. Only its goodbye is
   * taken; anything else is told why and hung up on.
   */
  private refuseEnded(header: unknown): void {
    if ((header as { t?: unknown } | null)?.t === 'goodbye' || this.socket.writableEnded) return;
    const job = this.job!;
    this.fail(ErrorCode.NotAllowed, `${job.id} has ended (${job.state}) and cannot run again on this connection; start the job anew (salus run)`);
    this.socket.end();
  }

  private onHello(header: unknown): void {
    const parsed = helloSchema.safeParse(header);
    if (!parsed.success) {
      this.fail(ErrorCode.BadMessage, `the first message must be hello: ${describeZodError(parsed.error)}`);
      this.socket.end();
      return;
    }
    const hello = parsed.data;
    if (hello.protocol !== PROTOCOL_VERSION) {
      this.fail(ErrorCode.VersionMismatch, `the client speaks protocol ${hello.protocol}, this service speaks ${PROTOCOL_VERSION} (salus ${SERVICE_VERSION}); use the same salus version for both`);
      this.socket.end();
      return;
    }
    this.role = hello.role;
    this.decoder.maxFrameBytes = MAX_FRAME_BYTES;
    const gpu = this.service.welcomeGpu(hello.hints);
    const adapter = { info: gpu.info, limits: gpu.limits, features: gpu.info.features, wgslLanguageFeatures: gpu.wgslLanguageFeatures };
    if (hello.role === 'job') {
      // Who is at the other end, from the OS (the hello's pid is only the job's claim).
      let peer: PeerSocket | null = null;
      const job = this.service.openJob(hello, {
        send: (m, p) => this.send(m, p),
        close: () => this.socket.end(),
        whenWritable: () => this.flow.whenWritable(),
        verifiedPids: (claimedPid) => verifiedPids(peer, claimedPid),
      });
      this.job = job;
      void this.identifyPeer().then((found) => {
        peer = found;
        this.service.identifyJob(job, found, peerPid(found, job.pid));
      });
      this.send({ t: 'welcome', protocol: PROTOCOL_VERSION, jobId: this.job.id, adapter, version: SERVICE_VERSION, bulkDir: this.service.options.bulkDir ?? null });
    } else {
      this.send({ t: 'welcome', protocol: PROTOCOL_VERSION, adapter, version: SERVICE_VERSION });
    }
  }

  private async onCall(header: unknown): Promise<void> {
    const parsed = callSchema.safeParse(header);
    if (!parsed.success) return this.fail(ErrorCode.BadMessage, `bad call: ${describeZodError(parsed.error)}`);
    const { rid, method, params } = parsed.data;
    if (method === 'subscribe') {
      this.subscribe();
      return this.send({ t: 'reply', rid, result: null });
    }
    try {
      const result = await runControl(this.target, method, params);
      this.send({ t: 'reply', rid, result: result ?? null });
    } catch (error) {
      const code = error instanceof ControlError ? error.code : ErrorCode.Internal;
      this.send({ t: 'reply', rid, error: { code, message: (error as Error).message } });
    }
  }

  private subscribe(): void {
    if (this.unsubscribe) return;
    const listener = (event: ServiceEvent) => {
      if (this.socket.writableLength > SUBSCRIBER_MAX_BUFFERED_BYTES && event.type !== 'snapshot') return;
      this.send({ t: 'event', event });
    };
    this.unsubscribe = this.service.onDidPublish(listener);
    this.send({ t: 'event', event: { type: 'snapshot', snapshot: this.service.snapshot() } });
  }

  private onClose(): void {
    this.unsubscribe?.();
    if (this.job) this.service.closeJob(this.job);
  }
}
