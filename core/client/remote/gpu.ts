/** `navigator.gpu` and GPUAdapter for a job: the adapter is the service's, described in its welcome. */
import { RemoteDevice } from './device.js';
import { deviceFeatures, deviceLimits } from './limits.js';
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
    const features = deviceFeatures(this.features, descriptor.requiredFeatures as Iterable<unknown> | undefined);
    const limits = deviceLimits(this.limits, descriptor.requiredLimits);
    this.#deviceRequested = true;
    const requiredLimits = Object.fromEntries(Object.entries(descriptor.requiredLimits ?? {}).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Number(v)]));
    try {
      await this.connection.request({ t: 'requestDevice', requiredFeatures: [...features], requiredLimits });
      return new RemoteDevice(this.connection, features, Object.freeze(limits), this.info, descriptor.label);
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
