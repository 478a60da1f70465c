/**
 * One device's view of the job's connection. A job may hold many devices (TF.js
 * makes a new one each time its backend is re-created, ONNX Runtime Web after
 * its last session is released); they share one socket and one id space, and
 * each remote object records through the channel of the device that made it.
 * The channel names its device to the service whenever the recording device
 * changes, and it alone knows whether its device was destroyed: that stops its
 * commands and fails its replies, and leaves the job's other devices as they are.
 */
import { ServiceError, settleWith, type ServiceConnection } from '../connection.js';
import type { Command, DataRef, GpuErrorJson } from '../../protocol/commands.js';

/** What a device hears of the service: errors it did not capture, and its loss. */
export interface DeviceEvents {
  uncaptured(error: GpuErrorJson): void;
  lost(reason: 'destroyed' | 'unknown', message: string): void;
}

/**
 * The most of a label the service is sent (it names objects in messages); the
 * job keeps the whole label, which a local device accepts at any length. 256
 * UTF-16 units stay within the command table's 1,024 bytes of UTF-8.
 */
const WIRE_LABEL_CHARS = 256;

export class DeviceChannel {
  #destroyed = false;
  /** What destroy() must abort now: the device's pending mapAsync calls. */
  readonly #onDestroy = new Set<() => void>();

  constructor(readonly connection: ServiceConnection, readonly deviceId: number) {}

  /** What the service said in its welcome. */
  get welcome(): ServiceConnection['welcome'] {
    return this.connection.welcome;
  }

  /**
   * Whether this device is lost: destroyed by the job, or the service is gone.
   * From then on nothing is sent and replies are refused at once; the remote GPU
   * answers each call as WebGPU does on a lost device.
   */
  get deviceLost(): boolean {
    return this.#destroyed || this.connection.closed !== null;
  }

  /** Routes the service's messages about this device to `events` (held weakly: a dropped device is forgotten). */
  listen(events: DeviceEvents): void {
    this.connection.registerDevice(this.deviceId, events);
  }

  /** `device.destroy()`: sends what is pending (the caller's last command included), then nothing more. */
  markDeviceDestroyed(): void {
    this.connection.flush();
    this.#destroyed = true;
    for (const abort of this.#onDestroy) abort();
    this.#onDestroy.clear();
  }

  /** Calls `abort` if the device is destroyed before the returned function is called. */
  untilDestroyed(abort: () => void): () => void {
    this.#onDestroy.add(abort);
    return () => this.#onDestroy.delete(abort);
  }

  /** Appends a command of this device to the batch. */
  record(cmd: Command): void {
    if (this.#destroyed) return;
    const label = (cmd as { label?: unknown }).label;
    if (label !== undefined && (typeof label !== 'string' || label.length > WIRE_LABEL_CHARS)) {
      (cmd as { label?: string }).label = String(label).slice(0, WIRE_LABEL_CHARS);
    }
    this.connection.recordFor(this.deviceId, cmd);
  }

  /** Appends a command of this device that carries no label (a submit, an awaited call) and sends the batch now. */
  recordAndFlush(cmd: Command): void {
    if (this.#destroyed) return this.connection.flush();
    this.connection.recordFor(this.deviceId, cmd, true);
  }

  /** Sends the pending batch, if any. */
  flush(): void {
    this.connection.flush();
  }

  /** Attaches bytes to the pending batch (see ServiceConnection.attach). */
  attach(bytes: Uint8Array, copy = false): DataRef {
    return this.connection.attach(bytes, copy);
  }

  /** A fresh object id (unique across the job's devices). */
  allocateId(): number {
    return this.connection.allocateId();
  }

  /** A fresh request id. */
  allocateRid(): number {
    return this.connection.allocateRid();
  }

  /** Registers a reply handler; on a destroyed device it rejects at once. */
  expectReply(rid: number): Promise<{ result: unknown; payload: Uint8Array }> {
    if (this.#destroyed) return Promise.reject(new ServiceError('salus: the device was destroyed', 0));
    return this.connection.expectReply(rid);
  }

  /** Registers the reply of a call that returns nothing (see ServiceConnection.expectDone); on a destroyed device `recover` decides at once. */
  expectDone(rid: number, recover: (error: Error) => void): Promise<undefined> {
    if (this.#destroyed) return settleWith(recover, new ServiceError('salus: the device was destroyed', 0));
    return this.connection.expectDone(rid, recover);
  }

  /** The job's garbage collector freed object `id` (ids are the job's, so no device is named). */
  release(id: number): void {
    this.connection.release(id);
  }
}
