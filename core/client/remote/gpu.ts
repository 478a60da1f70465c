/** `navigator.gpu` and GPUAdapter for a job: the adapter is the service's, described in its welcome. */
import { RemoteDevice } from './device.js';
import type { ServiceConnection } from '../connection.js';

/** GPUAdapterInfo as a plain frozen object with the fields browsers expose. */
function adapterInfo(connection: ServiceConnection): GPUAdapterInfo {
  const info = connection.welcome.adapter.info;
  const limits = connection.welcome.adapter.limits;
  return Object.freeze({
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    subgroupMinSize: limits.subgroupMinSize ?? 4,
    subgroupMaxSize: limits.subgroupMaxSize ?? 128,
    isFallbackAdapter: info.isSoftware,
  }) as unknown as GPUAdapterInfo;
}

export class RemoteAdapter {
  readonly features: ReadonlySet<string>;
  readonly limits: Readonly<Record<string, number>>;
  readonly info: GPUAdapterInfo;
  #deviceRequested = false;

  constructor(private readonly connection: ServiceConnection) {
    this.features = new Set(connection.welcome.adapter.features);
    this.limits = Object.freeze({ ...connection.welcome.adapter.limits });
    this.info = adapterInfo(connection);
  }

  get isFallbackAdapter(): boolean {
    return (this.info as unknown as { isFallbackAdapter: boolean }).isFallbackAdapter;
  }

  /** Older spelling of `info`, still called by some libraries. */
  async requestAdapterInfo(): Promise<GPUAdapterInfo> {
    return this.info;
  }

  /**
   * Resolves once the service admits the job (it may wait, queued, until memory frees);
   * rejects when the job could never fit or the request is invalid.
   */
  async requestDevice(descriptor: GPUDeviceDescriptor = {}): Promise<RemoteDevice> {
    if (this.#deviceRequested) {
      throw new DOMException('this adapter already gave out its device (one device per job)', 'OperationError');
    }
    const requiredFeatures = [...(descriptor.requiredFeatures ?? [])].map(String);
    for (const feature of requiredFeatures) {
      if (!this.features.has(feature)) throw new TypeError(`requestDevice: feature '${feature}' is not supported by the adapter`);
    }
    const requiredLimits: Record<string, number> = {};
    for (const [key, value] of Object.entries(descriptor.requiredLimits ?? {})) {
      if (value === undefined) continue;
      if (!(key in this.limits)) throw new DOMException(`requestDevice: unknown limit '${key}'`, 'OperationError');
      requiredLimits[key] = Number(value);
    }
    this.#deviceRequested = true;
    try {
      const result = await this.connection.request<{ limits: Record<string, number>; features: string[] }>({
        t: 'requestDevice', requiredFeatures, requiredLimits,
      });
      return new RemoteDevice(this.connection, new Set(result.features), Object.freeze(result.limits), this.info, descriptor.label);
    } catch (error) {
      throw new DOMException((error as Error).message, 'OperationError');
    }
  }
}

/** What a job sees as `navigator.gpu`. */
export class RemoteGPU {
  readonly wgslLanguageFeatures: ReadonlySet<string> = new Set();

  constructor(private readonly connection: ServiceConnection) {}

  async requestAdapter(_options?: GPURequestAdapterOptions): Promise<RemoteAdapter | null> {
    if (this.connection.closed) return null;
    return new RemoteAdapter(this.connection);
  }

  getPreferredCanvasFormat(): GPUTextureFormat {
    return 'bgra8unorm';
  }
}
