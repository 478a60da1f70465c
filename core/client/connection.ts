/**
 * A client's connection to the service socket: framing, the hello handshake,
 * request/reply by id, and (for jobs) the command batch that the remote GPU
 * records into and flushes at submit, at every await, and in any case within
 * one macrotask of its first command (so work recorded before a timer or an
 * event wait still reaches the service).
 */
import { connect, type Socket } from 'node:net';
import { EventEmitter } from 'node:events';
import { FrameDecoder, MAX_FRAME_BYTES } from '../protocol/frames.js';
import { PROTOCOL_VERSION, type Hello, type ServerMessage } from '../protocol/messages.js';
import type { Command, DataRef } from '../protocol/commands.js';
import { CommandWriter } from '../protocol/commandCodec.js';
import type { DeviceEvents } from './remote/channel.js';
import { BULK_MIN_BYTES, scratchFileName } from '../platform/bulkDir.js';
import { BulkScratch } from './bulkScratch.js';
import { sendFrame } from '../platform/frameWriter.js';
import { ReusedReads } from '../platform/reusedReads.js';
import { WorkDoneFrame } from './workDoneFrame.js';
import { QuickTurns } from '../platform/quickTurns.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Payload bytes after which a batch is flushed even without an await. */
const FLUSH_PAYLOAD_BYTES = 16 * 1024 * 1024;
/** Commands after which a batch is flushed even without an await. */
const FLUSH_COMMANDS = 4096;

/** An error answered by the service; `code` is one of ErrorCode. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(message: string, readonly code: number, readonly detail?: unknown) {
    super(message);
  }
}

type Pending = { resolve: (value: { result: unknown; payload: Uint8Array }) => void; reject: (error: Error) => void };

/** A call's promise once `error` ended it: resolved when `recover` returns, rejected with what it throws. */
export function settleWith(recover: (error: Error) => void, error: Error): Promise<undefined> {
  try {
    recover(error);
    return Promise.resolve(undefined);
  } catch (thrown) {
    return Promise.reject(thrown);
  }
}

/**
 * Events: `message` (every ServerMessage that is not a reply), `close` (Error | null).
 */
export class ServiceConnection extends EventEmitter {
  private readonly decoder = new FrameDecoder(MAX_FRAME_BYTES);
  private readonly pending = new Map<number, Pending>();
  private nextRid = 1;
  private nextObjectId = 1;
  private nextBulkFile = 1;
  /** The batch being recorded, as its binary command stream (one buffer, reused). */
  private readonly commands = new CommandWriter();
  /** Ids the job's garbage collector freed: they ride at the end of the next batch (see release()). */
  private releases: number[] = [];
  private payload: Uint8Array[] = [];
  private payloadBytes = 0;
  /** The job's scratch file in the bulk folder (null without one), and its bytes the pending batch names. */
  private scratch: BulkScratch | null | undefined;
  private scratchBytes = 0;
  private closedError: Error | null = null;
  private flushScheduled: NodeJS.Immediate | null = null;
  /** What the service said when it declared the job's devices lost (kill, a lost GPU). */
  private lostMessage: string | null = null;
  /** The device the service replays commands for now (it switches at each `useDevice`). */
  private currentDevice = 0;
  private nextDeviceId = 1;
  /** The job's devices, for the messages about one of them; weak, so a dropped device is forgotten. */
  private readonly devices = new Map<number, WeakRef<DeviceEvents>>();
  /** What the service said in `welcome`. */
  welcome!: Extract<ServerMessage, { t: 'welcome' }>;
  /** An idle awaited call's frame, made at its first use (null: the general path sends it). */
  private workDoneFrame: WorkDoneFrame | null | undefined;
  /** How soon the service answers an awaited call: while it answers quickly, the job stays awake for the answer. */
  private readonly turns = new QuickTurns();

  private constructor(private readonly socket: Socket, readonly socketPath: string, reads: ReusedReads) {
    super();
    reads.setReader((chunk) => this.onData(chunk));
    socket.on('error', (error) => this.onClose(error));
    socket.on('close', () => this.onClose(null));
  }

  /** Connects and completes the handshake; rejects with a message saying what to do when no service answers. */
  static async open(socketPath: string, hello: Omit<Hello, 't' | 'protocol'>): Promise<ServiceConnection> {
    const reads = new ReusedReads();
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = connect({ path: socketPath, onread: reads.onread });
      s.once('connect', () => resolve(s));
      s.once('error', (error: NodeJS.ErrnoException) => {
        const hint = error.code === 'ENOENT' || error.code === 'ECONNREFUSED'
          ? `no Salus service is listening at ${socketPath}. Start one with \`salus serve\` or open Salus Desktop (or set SALUS_SOCKET / --socket).`
          : `cannot connect to ${socketPath}: ${error.message}`;
        reject(new ServiceError(`salus: ${hint}`, 0));
      });
    });
    const connection = new ServiceConnection(socket, socketPath, reads);
    const welcome = await new Promise<ServerMessage>((resolve, reject) => {
      connection.once('welcome', resolve);
      connection.once('close', (error: Error | null) => reject(error ?? new ServiceError('salus: the service closed the connection during the handshake', 0)));
      connection.send({ t: 'hello', protocol: PROTOCOL_VERSION, ...hello });
    });
    connection.welcome = welcome as Extract<ServerMessage, { t: 'welcome' }>;
    connection.updateRef();
    return connection;
  }

  /**
   * The job's scratch in the bulk folder, or null where the service offers no
   * bulk channel. Made at first use: a job that moves no bulk bytes opens and maps nothing.
   */
  bulkScratch(): BulkScratch | null {
    const bulkDir = this.welcome?.bulkDir;
    const jobId = this.welcome?.jobId;
    if (!bulkDir || !jobId) return null;
    return (this.scratch ??= new BulkScratch(join(bulkDir, scratchFileName(jobId))));
  }

  /** Names `lengthBytes` already at `offset` of the scratch (see BulkScratch.holdToUpload) as a command's bytes. */
  attachScratch(offset: number, lengthBytes: number): DataRef {
    this.scratchBytes += lengthBytes;
    return { scratch: offset, length: lengthBytes };
  }

  /** Whether the connection is gone, and why. */
  get closed(): Error | null {
    return this.closedError;
  }

  /** A fresh device id for this connection (the first is 1). */
  allocateDeviceId(): number {
    return this.nextDeviceId++;
  }

  /** Routes `uncaptured` and `lost` messages about device `id` to `events`. */
  registerDevice(id: number, events: DeviceEvents): void {
    this.devices.set(id, new WeakRef(events));
  }

  /** A fresh object id for this connection. */
  allocateId(): number {
    return this.nextObjectId++;
  }

  /** A fresh request id. */
  allocateRid(): number {
    return this.nextRid++;
  }

  /** Sends a frame now (flushing the batch first, so order is kept). */
  send(header: object, payload: Uint8Array[] = []): void {
    if (header && (header as { t?: string }).t !== 'batch') this.flush();
    this.write(header, payload);
  }

  /**
   * Appends a command that belongs to no device (iteration marks of the job
   * SDK) to the batch; `data` is attached to the payload and referenced by the command.
   */
  record(cmd: Command): void {
    this.append(cmd, true);
  }

  /**
   * Appends a command of device `deviceId`, naming the device first when the
   * previous command was another's. The service keeps the current device across
   * batches, as this side does. With `flushNow` the batch is sent at once (an
   * awaited call, a submit), and no flush is scheduled for it first.
   */
  recordFor(deviceId: number, cmd: Command, flushNow = false): void {
    if (flushNow && cmd.op === 'workDone' && this.sendWorkDoneAlone(deviceId, cmd.rid)) return;
    if (deviceId !== this.currentDevice && cmd.op !== 'configureDevice') this.append({ op: 'useDevice', device: deviceId }, !flushNow);
    this.currentDevice = deviceId;
    this.append(cmd, !flushNow);
    if (flushNow) this.flush();
  }

  /**
   * Sends an awaited `onSubmittedWorkDone` recorded with nothing before it (no commands, releases or
   * bytes pending, the same device) as its prebuilt frame (core/client/workDoneFrame.ts): the bytes
   * the general path would send. False when that path must send it.
   */
  private sendWorkDoneAlone(deviceId: number, rid: number): boolean {
    if (deviceId !== this.currentDevice || this.commands.count > 0 || this.releases.length > 0 || this.payloadBytes > 0 || this.scratchBytes > 0) return false;
    if (!Number.isInteger(rid) || rid < 0 || rid > 0xffffffff) return false;
    if (this.workDoneFrame === undefined) this.workDoneFrame = WorkDoneFrame.create();
    if (!this.workDoneFrame) return false;
    if (this.closedError || this.socket.destroyed) return true;
    // Nothing queued on the socket: the last frame has left the process, so its buffer can be written again.
    this.socket.write(this.workDoneFrame.bytesFor(rid, this.socket.writableLength === 0));
    return true;
  }

  /** Writes `cmd` into the batch; the first command of a batch schedules its flush unless told the caller flushes. */
  private append(cmd: Command, scheduleFlush: boolean): void {
    if (scheduleFlush && this.commands.count === 0) this.scheduleFlush();
    this.commands.write(cmd);
    if (this.commands.count >= FLUSH_COMMANDS || this.payloadBytes >= FLUSH_PAYLOAD_BYTES) this.flush();
  }

  /**
   * The job dropped object `id`. Sending that never needs to hurry, and waits
   * for the next batch: appended at its end, it can never precede a command of
   * the job that was recorded earlier (and an idle job's own frees, such as
   * the destroys after a readback, stay in the batch they belong to).
   */
  release(id: number): void {
    this.releases.push(id);
    if (this.releases.length >= FLUSH_COMMANDS) this.scheduleFlush();
  }

  /**
   * Attaches bytes to the pending batch; returns the reference for a command. Large
   * payloads go through the bulk channel when the service offers one (written now,
   * so the caller may reuse its memory at once); others ride in the frame, copied
   * first when `copy` is set (the caller's memory may change before the flush).
   */
  attach(bytes: Uint8Array, copy = false): DataRef {
    const bulkDir = this.welcome?.bulkDir;
    const jobId = this.welcome?.jobId;
    const scratch = bytes.byteLength >= BULK_MIN_BYTES ? this.bulkScratch() : null;
    if (bulkDir && jobId && scratch) {
      const offset = scratch.write(bytes);
      if (offset !== null) return this.attachScratch(offset, bytes.byteLength);
      // The scratch file is full (the service has not read it yet) or unusable: a file of its own.
      const file = `${jobId}-${this.nextBulkFile++}`;
      try {
        writeFileSync(join(bulkDir, file), bytes, { mode: 0o600, flag: 'wx' });
        return { file, length: bytes.byteLength };
      } catch {
        // The shared-memory folder is full or gone: fall back to the socket.
      }
    }
    if (copy) bytes = bytes.slice();
    if (this.payloadBytes + bytes.byteLength > FLUSH_PAYLOAD_BYTES && this.commands.count > 0) this.flush();
    const ref: [number, number] = [this.payloadBytes, bytes.byteLength];
    this.payload.push(bytes);
    this.payloadBytes += bytes.byteLength;
    return ref;
  }

  /** Sends the pending batch, if any. */
  flush(): void {
    if (this.flushScheduled) {
      clearImmediate(this.flushScheduled);
      this.flushScheduled = null;
    }
    if (this.releases.length >= FLUSH_COMMANDS || (this.commands.count > 0 && this.releases.length > 0)) {
      for (const id of this.releases) this.commands.write({ op: 'release', id });
      this.releases = [];
    }
    if (this.commands.count === 0) return;
    // Copied out of the writer: the socket may hold the bytes until they are sent, and the writer is reused.
    const commands = this.commands.take();
    const payload = this.payload;
    const scratchBytes = this.scratchBytes;
    this.payload = [];
    this.payloadBytes = 0;
    this.scratchBytes = 0;
    const header = scratchBytes > 0 ? { t: 'batch', commandBytes: commands.byteLength, scratchBytes } : { t: 'batch', commandBytes: commands.byteLength };
    if (payload.length === 0) this.write(header, [commands]);
    else this.write(header, [commands, ...payload]);
  }

  /** Flushes at the end of this macrotask, unless something flushes sooner. */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = setImmediate(() => {
      this.flushScheduled = null;
      this.flush();
    });
    // An idle job must still be able to exit (and say goodbye, which flushes).
    this.flushScheduled.unref();
  }

  /** Registers a reply handler for `rid` (the command carrying it is recorded by the caller). */
  expectReply(rid: number): Promise<{ result: unknown; payload: Uint8Array }> {
    if (this.closedError) return Promise.reject(this.closedError);
    // Keep the process alive only while it waits for the service (see updateRef).
    this.socket.ref();
    this.turns.sent();
    return new Promise((resolve, reject) => this.pending.set(rid, { resolve, reject }));
  }

  /**
   * Registers the reply of a call that returns nothing (an awaited `onSubmittedWorkDone`): the promise
   * returned is the one the reply settles, with no second promise between the reply and the caller. An
   * error reply, or a closed connection, goes to `recover`: the call resolves when it returns, and rejects
   * with what it throws.
   */
  expectDone(rid: number, recover: (error: Error) => void): Promise<undefined> {
    if (this.closedError) return settleWith(recover, this.closedError);
    this.socket.ref();
    this.turns.sent();
    return new Promise((resolve, reject) => this.pending.set(rid, {
      resolve: () => resolve(undefined),
      reject: (error) => {
        try {
          recover(error);
          resolve(undefined);
        } catch (thrown) {
          reject(thrown);
        }
      },
    }));
  }

  /** Sends a control call and waits for its result. */
  async call<T = unknown>(method: string, ...params: unknown[]): Promise<T> {
    const rid = this.allocateRid();
    const reply = this.expectReply(rid);
    this.send({ t: 'call', rid, method, params });
    return (await reply).result as T;
  }

  /** Sends a message that expects a reply (e.g. requestDevice) and waits for it. */
  async request<T = unknown>(header: { t: string; [key: string]: unknown }): Promise<T> {
    const rid = this.allocateRid();
    const reply = this.expectReply(rid);
    this.send({ ...header, rid });
    return (await reply).result as T;
  }

  /** Flushes, then ends the connection once written. */
  close(): void {
    this.flush();
    this.socket.end();
  }

  /**
   * An idle connection must not keep a job alive after its script ends (so it can
   * exit and say goodbye), while one awaiting a reply must.
   */
  private updateRef(): void {
    if (this.pending.size === 0) this.socket.unref();
    else this.socket.ref();
  }

  private write(header: object, payload: Uint8Array[]): void {
    if (this.closedError || this.socket.destroyed) return;
    sendFrame(this.socket, header, payload);
  }

  /** Handles one read; returns whether anything still refers to `chunk`'s bytes (see ReusedReads). */
  private onData(chunk: Uint8Array): boolean {
    let frames;
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.socket.destroy(error as Error);
      return false;
    }
    let held = this.decoder.holdsInput;
    for (const frame of frames) {
      // A reply's payload is handed on as a view of the read: the read buffer is not reused under it.
      if (frame.payload.byteLength > 0 && frame.payload.buffer === chunk.buffer) held = true;
      const message = frame.header as ServerMessage;
      if (!message || typeof message !== 'object') continue;
      if (message.t === 'reply') {
        this.turns.received();
        const waiter = this.pending.get(message.rid);
        if (!waiter) continue;
        this.pending.delete(message.rid);
        this.updateRef();
        if (message.error) waiter.reject(new ServiceError(message.error.message, message.error.code, message.error));
        else waiter.resolve({ result: message.result, payload: frame.payload });
      } else if (message.t === 'scratchRead') {
        this.scratch?.consumed(message.bytes);
      } else if (message.t === 'welcome') {
        this.emit('welcome', message);
      } else if (message.t === 'error' && !this.welcome) {
        this.onClose(new ServiceError(`salus: ${message.message}`, message.code));
      } else {
        if (message.t === 'lost') this.lostMessage = message.message;
        this.routeToDevices(message);
        this.emit('message', message);
      }
    }
    return held;
  }

  /** An uncaptured error goes to its device (the first, from a service that names none); a loss to all. */
  private routeToDevices(message: ServerMessage): void {
    if (message.t === 'uncaptured') {
      const target = this.devices.get(message.device ?? 1)?.deref();
      target?.uncaptured(message.error);
    } else if (message.t === 'lost') {
      for (const ref of this.devices.values()) ref.deref()?.lost(message.reason, message.message);
    }
  }

  private onClose(socketError: Error | null): void {
    if (this.closedError) return;
    // After the service said why the devices are lost, that is why every pending call fails; else the
    // socket's own error (ECONNRESET when the service died) is said in words first.
    const why = this.lostMessage
      ?? (socketError ? `the Salus service went away (it stopped or crashed: ${socketError.message})` : 'the connection to the Salus service closed');
    this.closedError = new ServiceError(`salus: ${why}`, 0);
    for (const waiter of this.pending.values()) waiter.reject(this.closedError);
    this.pending.clear();
    for (const ref of this.devices.values()) ref.deref()?.lost('unknown', why);
    this.scratch?.close();
    this.emit('close', socketError);
    this.socket.destroy();
  }
}
