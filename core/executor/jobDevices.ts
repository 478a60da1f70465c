/**
 * The devices one job holds on the shared device: each its own error scopes
 * (core/executor/errorScopes.ts) and its own features and limits, and the one
 * the job's commands are for now. Creating and switching follow the job's
 * configureDevice and useDevice commands; a job may hold MAX_DEVICES_PER_JOB.
 */
import type { GpuErrorJson } from '../protocol/commands.js';
import { ErrorScopes } from './errorScopes.js';
import type { DeviceConfig } from './objects.js';

/** One of the job's devices: its own error scopes and its own features and limits. */
export interface JobDevice {
  id: number;
  scopes: ErrorScopes;
  config: DeviceConfig | null;
}

/** Devices a job may hold at once (each costs the service little, but not nothing). */
export const MAX_DEVICES_PER_JOB = 1024;

/** Why a job cannot have another device. */
export const TOO_MANY_DEVICES = `a job may hold at most ${MAX_DEVICES_PER_JOB} devices at once; destroy the ones it no longer uses`;

export class JobDevices {
  /** The job's live devices by id (a destroyed one leaves). */
  private readonly byId = new Map<number, JobDevice>();
  /** The device the job's commands are for now (device 1 until it names another). */
  current: JobDevice;

  constructor(
    private readonly device: GPUDevice,
    /** An error no scope of device `deviceId` captured. */
    private readonly uncaptured: (error: GpuErrorJson, deviceId: number) => void,
    /** Any error a scope caught (e.g. the working set's reading is then unreliable). */
    private readonly onError: () => void,
  ) {
    this.current = this.add(1);
  }

  /** How many devices the job holds (created and not destroyed). */
  get count(): number {
    return this.byId.size;
  }

  /** The error scopes open on all the job's devices together. */
  get scopeDepth(): number {
    let depth = 0;
    for (const device of this.byId.values()) depth += device.scopes.depth;
    return depth;
  }

  /** The current device was destroyed: its scopes stay current until the next device is named, as nothing more comes for it. */
  forgetCurrent(): void {
    this.byId.delete(this.current.id);
  }

  /**
   * Makes device `id` the one the job's commands are for: a new device when
   * `config` is given (its `configureDevice`), else one the job already has.
   * The open error-scope segment belongs to the device before, so it closes
   * first. False (and a validation error for the job) when it cannot.
   */
  switchTo(id: number, config: DeviceConfig | null): boolean {
    let next = this.byId.get(id);
    const scopes = this.current.scopes;
    if (!next && !config) {
      scopes.report({ type: 'validation', message: `useDevice: the job has no device ${id} (never created, or destroyed)` });
      return false;
    }
    if (!next && this.byId.size >= MAX_DEVICES_PER_JOB) {
      scopes.report({ type: 'validation', message: `configureDevice: ${TOO_MANY_DEVICES}` });
      return false;
    }
    if (next !== this.current) {
      scopes.closeSegment();
      next ??= this.add(id);
      this.current = next;
      next.scopes.openSegment();
    }
    if (config) this.current.config = config;
    return true;
  }

  private add(id: number): JobDevice {
    const scopes = new ErrorScopes(this.device, (error) => this.uncaptured(error, id), this.onError);
    const device: JobDevice = { id, scopes, config: null };
    this.byId.set(id, device);
    return device;
  }
}
