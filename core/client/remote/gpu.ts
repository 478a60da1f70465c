/** `navigator.gpu` and GPUAdapter for a job: the adapter is the service's, described in its welcome. */
import { DeviceChannel } from './channel.js';
import { RemoteDevice } from './device.js';
import { deviceFeatures, deviceLimits } from './limits.js';
import { dictionary, size64 } from './webidl.js';
import { adapterInfo as makeAdapterInfo, supportedFeatures, supportedLimits, wgslLanguageFeatures } from './interfaces.js';
import type { ServiceConnection } from '../connection.js';

/** Fields a newer service may add to its welcome; read when present. */
interface WelcomeExtras {
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  wgslLanguageFeatures?: string[];
}

/** The adapter's GPUAdapterInfo, from the service's welcome. */
function adapterInfo(connection: ServiceConnection): GPUAdapterInfo {
  const info = connection.welcome.adapter.info as typeof connection.welcome.adapter.info & WelcomeExtras;
  const limits = connection.welcome.adapter.limits;
  return makeAdapterInfo({
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    // WebGPU's widest range when the service does not say (Dawn moved these from limits to info).
    subgroupMinSize: info.subgroupMinSize ?? limits.subgroupMinSize ?? 4,
    subgroupMaxSize: info.subgroupMaxSize ?? limits.subgroupMaxSize ?? 128,
    isFallbackAdapter: info.isSoftware,
  });
}

const POWER_PREFERENCES = ['low-power', 'high-performance'];
const FEATURE_LEVELS = ['core', 'compatibility'];

/**
 * `requiredLimits` as WebIDL converts a `record<DOMString, (GPUSize64 or undefined)>`:
 * each value an [EnforceRange] unsigned long long (NaN, ±Infinity, below 0 or
 * past 2^53−1 is a TypeError), undefined ones left out.
 */
function convertRequiredLimits(requiredLimits: unknown): Record<string, number> {
  const converted: Record<string, number> = {};
  if (requiredLimits === undefined || requiredLimits === null) return converted;
  if (typeof requiredLimits !== 'object' && typeof requiredLimits !== 'function') {
    throw new TypeError('requestDevice: requiredLimits is not an object');
  }
  for (const key of Object.keys(requiredLimits)) {
    const value = (requiredLimits as Record<string, unknown>)[key];
    if (value !== undefined) converted[key] = size64(value, `requestDevice: requiredLimits.${key}`);
  }
  return converted;
}

export class RemoteAdapter {
  readonly #connection: ServiceConnection;
  readonly #features: GPUSupportedFeatures;
  readonly #limits: GPUSupportedLimits;
  readonly #info: GPUAdapterInfo;
  #consumed = false;

  constructor(connection: ServiceConnection) {
    this.#connection = connection;
    this.#features = supportedFeatures(connection.welcome.adapter.features);
    this.#limits = supportedLimits(connection.welcome.adapter.limits);
    this.#info = adapterInfo(connection);
  }

  get features(): GPUSupportedFeatures { return this.#features; }

  get limits(): GPUSupportedLimits { return this.#limits; }

  get info(): GPUAdapterInfo { return this.#info; }

  /** Older spelling of `info`, still called by some libraries. */
  async requestAdapterInfo(): Promise<GPUAdapterInfo> {
    return this.info;
  }

  /**
   * A new device of the job. The job's first resolves once the service admits
   * the job (it may wait, queued, until memory frees); later ones at once, and
   * all count as the one job. Rejects when the job could never fit or the
   * request is invalid. As on a local adapter, each adapter gives out one device:
   * ask `navigator.gpu.requestAdapter()` again for the next.
   */
  async requestDevice(descriptorArg?: GPUDeviceDescriptor | null): Promise<RemoteDevice> {
    const descriptor = dictionary(descriptorArg);
    if (this.#consumed) {
      // dawn.node's words for the same case.
      throw new DOMException('adapter is "consumed": it has already been used to create a device', 'OperationError');
    }
    // WebIDL converts the whole descriptor first: a limit that is no GPUSize64 is a TypeError, even an unknown one.
    const requiredLimits = convertRequiredLimits(descriptor.requiredLimits);
    const features = deviceFeatures(this.features, descriptor.requiredFeatures as Iterable<unknown> | undefined);
    const limits = deviceLimits(this.#connection.welcome.adapter.limits, requiredLimits);
    this.#consumed = true;
    try {
      await this.#connection.request({ t: 'requestDevice', requiredFeatures: [...features], requiredLimits });
    } catch (error) {
      throw new DOMException((error as Error).message, 'OperationError');
    }
    const channel = new DeviceChannel(this.#connection, this.#connection.allocateDeviceId());
    // The device's adapterInfo is its own object, with the adapter's values (the CTS's adapter,info:same_object).
    return new RemoteDevice(channel, features, limits, adapterInfo(this.#connection), descriptor.label);
  }
}

/** What a job sees as `navigator.gpu`. */
export class RemoteGPU {
  /** The service's WGSL language features, when its welcome names them. */
  readonly #connection: ServiceConnection;
  readonly #wgslLanguageFeatures: WGSLLanguageFeatures;

  constructor(connection: ServiceConnection) {
    this.#connection = connection;
    this.#wgslLanguageFeatures = wgslLanguageFeatures((connection.welcome.adapter as WelcomeExtras).wgslLanguageFeatures ?? []);
  }

  async requestAdapter(optionsArg?: GPURequestAdapterOptions | null): Promise<RemoteAdapter | null> {
    const options = dictionary(optionsArg);
    const { powerPreference, featureLevel } = options as GPURequestAdapterOptions & { featureLevel?: unknown };
    if (powerPreference !== undefined && !POWER_PREFERENCES.includes(String(powerPreference))) {
      throw new TypeError(`requestAdapter: '${String(powerPreference)}' is not a valid GPUPowerPreference`);
    }
    // featureLevel is a DOMString, not an enum: one the implementation does not know gives no adapter.
    if (featureLevel !== undefined && !FEATURE_LEVELS.includes(String(featureLevel))) return null;
    if (this.#connection.closed) return null;
    return new RemoteAdapter(this.#connection);
  }

  get wgslLanguageFeatures(): WGSLLanguageFeatures { return this.#wgslLanguageFeatures; }

  getPreferredCanvasFormat(): GPUTextureFormat {
    return 'bgra8unorm';
  }
}
