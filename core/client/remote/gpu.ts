/** `navigator.gpu` and GPUAdapter for a job: the adapter is the service's, described in its welcome. */
import { DeviceChannel } from './channel.js';
import { RemoteDevice } from './device.js';
import { deviceFeatures, deviceLimits } from './limits.js';
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

export class RemoteAdapter {
  readonly features: GPUSupportedFeatures;
  readonly limits: GPUSupportedLimits;
  readonly info: GPUAdapterInfo;
  #consumed = false;

  constructor(private readonly connection: ServiceConnection) {
    this.features = supportedFeatures(connection.welcome.adapter.features);
    this.limits = supportedLimits(connection.welcome.adapter.limits);
    this.info = adapterInfo(connection);
  }

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
  async requestDevice(descriptor: GPUDeviceDescriptor = {}): Promise<RemoteDevice> {
    if (this.#consumed) {
      // dawn.node's words for the same case.
      throw new DOMException('adapter is "consumed": it has already been used to create a device', 'OperationError');
    }
    const features = deviceFeatures(this.features, descriptor.requiredFeatures as Iterable<unknown> | undefined);
    const limits = deviceLimits(this.connection.welcome.adapter.limits, descriptor.requiredLimits);
    this.#consumed = true;
    const requiredLimits = Object.fromEntries(Object.entries(descriptor.requiredLimits ?? {}).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Number(v)]));
    try {
      await this.connection.request({ t: 'requestDevice', requiredFeatures: [...features], requiredLimits });
    } catch (error) {
      throw new DOMException((error as Error).message, 'OperationError');
    }
    const channel = new DeviceChannel(this.connection, this.connection.allocateDeviceId());
    return new RemoteDevice(channel, features, limits, this.info, descriptor.label);
  }
}

/** What a job sees as `navigator.gpu`. */
export class RemoteGPU {
  /** The service's WGSL language features, when its welcome names them. */
  readonly wgslLanguageFeatures: WGSLLanguageFeatures;

  constructor(private readonly connection: ServiceConnection) {
    this.wgslLanguageFeatures = wgslLanguageFeatures((connection.welcome.adapter as WelcomeExtras).wgslLanguageFeatures ?? []);
  }

  async requestAdapter(_options?: GPURequestAdapterOptions): Promise<RemoteAdapter | null> {
    if (this.connection.closed) return null;
    return new RemoteAdapter(this.connection);
  }

  getPreferredCanvasFormat(): GPUTextureFormat {
    return 'bgra8unorm';
  }
}
