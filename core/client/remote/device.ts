/**
 * GPUDevice and GPUQueue for a job: each call is recorded as a command for the
 * service to replay on the shared device, in this job's session. A job may hold
 * many devices; each has its own objects, error scopes, `uncapturederror` and
 * `lost`, as devices of a local adapter do. Errors come back through error scopes
 * and `uncapturederror`; `lost` resolves when the job destroys the device, the
 * service ends the job, or the connection breaks.
 */
import { RemoteObject, idOf, unsupported } from './base.js';
import { RemoteBuffer } from './buffer.js';
import { RemoteCommandEncoder } from './encoder.js';
import { GPUPipelineError, GPUUncapturedErrorEvent, gpuErrorFromJson, type GPUError } from './errors.js';
import {
  RemoteBindGroup, RemoteBindGroupLayout, RemoteCommandBuffer, RemoteComputePipeline, RemotePipelineLayout,
  RemoteQuerySet, RemoteShaderModule,
} from './objects.js';
import type { DeviceChannel, DeviceEvents } from './channel.js';
import { DATA_CHUNK_BYTES, type GpuErrorJson } from '../../protocol/commands.js';
import { bytesOf, dictionary, enumValue, optionalSize64, optionalUint32, size64, uint32 } from './webidl.js';
import { deviceLostInfo, supportedFeatures, supportedLimits } from './interfaces.js';
import { bindGroupCommand, layoutEntry } from './bindings.js';
import { writeTexture } from './texelCopies.js';
import { RemoteSampler, RemoteTexture } from './texture.js';
import { RemoteRenderBundleEncoder, RemoteRenderPipeline, recordRenderPipeline, renderPipelineDescriptor } from './render.js';

const QUERY_TYPES = ['occlusion', 'timestamp'] as const;
const ERROR_FILTERS = ['validation', 'out-of-memory', 'internal'] as const;

/**
 * `compute.constants` as WebIDL converts a `record<USVString, GPUPipelineConstantValue>`:
 * each value a `double`, so NaN and ±Infinity are a TypeError.
 */
function pipelineConstants(constants: unknown): Record<string, number> | undefined {
  if (constants === undefined || constants === null) return undefined;
  if (typeof constants !== 'object' && typeof constants !== 'function') throw new TypeError('constants is not an object');
  const converted: Record<string, number> = {};
  for (const key of Object.keys(constants)) {
    const value = Number((constants as Record<string, unknown>)[key]);
    if (!Number.isFinite(value)) throw new TypeError(`constant '${key}': ${String(value)} is not a finite number`);
    converted[key] = value;
  }
  return converted;
}

export class RemoteQueue extends RemoteObject {
  submit(commandBuffers: Iterable<GPUCommandBuffer>): undefined {
    const buffers = [...commandBuffers];
    const ids = buffers.map((cb) => idOf(cb, 'GPUCommandBuffer'));
    this.channel.recordAndFlush({ op: 'submit', commandBuffers: ids });
    // Submitted work no longer needs its resources alive on this side (destroying them now is allowed).
    for (const cb of buffers) if (cb instanceof RemoteCommandBuffer) cb.submitted();
    return undefined;
  }

  writeBuffer(buffer: GPUBuffer, bufferOffsetArg: number, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer, dataOffset?: number, size?: number): undefined {
    const id = idOf(buffer, 'GPUBuffer');
    const bufferOffset = size64(bufferOffsetArg, 'writeBuffer: bufferOffset');
    const bytes = bytesOf('writeBuffer', data, optionalSize64(dataOffset, 'writeBuffer: dataOffset'), optionalSize64(size, 'writeBuffer: size'));
    if (bytes.byteLength % 4 !== 0) throw new DOMException(`writeBuffer: ${bytes.byteLength} bytes is not a multiple of 4`, 'OperationError');
    // Copy now: the job may change its array as soon as this returns.
    for (let start = 0; start < bytes.byteLength || start === 0; start += DATA_CHUNK_BYTES) {
      const piece = bytes.subarray(start, Math.min(bytes.byteLength, start + DATA_CHUNK_BYTES));
      const data = this.channel.attach(piece, true);
      this.channel.record({ op: 'writeBuffer', id, offset: bufferOffset + start, data });
      // A piece already in the bulk channel can be read by the service while the next is written.
      if (!Array.isArray(data)) this.channel.flush();
      if (bytes.byteLength === 0) break;
    }
    return undefined;
  }

  onSubmittedWorkDone(): Promise<undefined> {
    // The reply settles the very promise the caller awaits (no promise between them): the idle call is a round trip's floor.
    const rid = this.channel.allocateRid();
    const done = this.channel.expectDone(rid, this.#unlessLost);
    try {
      this.channel.recordAndFlush({ op: 'workDone', rid });
    } catch (error) {
      return Promise.reject(error);
    }
    return done;
  }

  /** A lost device has no work left to wait for: its error replies resolve the call. */
  readonly #unlessLost = (error: Error): void => {
    if (!this.channel.deviceLost) throw error;
  };

  writeTexture(destination: GPUTexelCopyTextureInfo, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer, dataLayout: GPUTexelCopyBufferLayout, size: GPUExtent3D): undefined {
    writeTexture(this.channel, destination, data, dataLayout, size);
    return undefined;
  }

  copyExternalImageToTexture(): never { return unsupported('queue.copyExternalImageToTexture'); }
}

export class RemoteDevice extends EventTarget {
  readonly #channel: DeviceChannel;
  readonly #queue: RemoteQueue;
  readonly #lost: Promise<GPUDeviceLostInfo>;
  readonly #features: GPUSupportedFeatures;
  readonly #limits: GPUSupportedLimits;
  readonly #adapterInfo: GPUAdapterInfo;
  #label: string;
  #resolveLost!: (info: GPUDeviceLostInfo) => void;
  #isLost = false;
  /** Held here, so the connection's weak reference to it lives as long as this device. */
  readonly #events: DeviceEvents = {
    uncaptured: (error) => this.#uncaptured(error),
    lost: (reason, message) => this.#lose(reason, message),
  };

  constructor(
    channel: DeviceChannel,
    features: ReadonlySet<string>,
    limits: Record<string, number>,
    adapterInfo: GPUAdapterInfo,
    label?: string,
  ) {
    super();
    this.#channel = channel;
    this.#adapterInfo = adapterInfo;
    this.#label = label === undefined ? '' : String(label);
    this.#features = supportedFeatures(features);
    this.#limits = supportedLimits(limits);
    this.#queue = new RemoteQueue(channel, 0, undefined);
    channel.record({ op: 'configureDevice', device: channel.deviceId, features: [...features], limits: { ...limits } });
    this.#lost = new Promise((resolve) => { this.#resolveLost = resolve; });
    channel.listen(this.#events);
    if (channel.deviceLost) this.#lose('unknown', 'the connection to the Salus service closed');
  }

  /** The device's channel (not a WebGPU attribute: the remote GPU's own). */
  get channel(): DeviceChannel { return this.#channel; }
  get queue(): RemoteQueue { return this.#queue; }
  get lost(): Promise<GPUDeviceLostInfo> { return this.#lost; }
  get features(): GPUSupportedFeatures { return this.#features; }
  get limits(): GPUSupportedLimits { return this.#limits; }
  get adapterInfo(): GPUAdapterInfo { return this.#adapterInfo; }
  get label(): string { return this.#label; }
  set label(value: string) { this.#label = String(value); }

  createBuffer(descriptor: GPUBufferDescriptor): RemoteBuffer {
    return new RemoteBuffer(this.channel, this.channel.allocateId(), descriptor);
  }

  createShaderModule(descriptor: GPUShaderModuleDescriptor): RemoteShaderModule {
    const id = this.channel.allocateId();
    this.channel.record({ op: 'createShaderModule', id, code: descriptor.code, label: descriptor.label });
    return new RemoteShaderModule(this.channel, id, descriptor.label);
  }

  createBindGroupLayout(descriptor: GPUBindGroupLayoutDescriptor): RemoteBindGroupLayout {
    const id = this.channel.allocateId();
    const entries = [...descriptor.entries].map((entry) => layoutEntry(entry, this.#features));
    this.channel.record({ op: 'createBindGroupLayout', id, entries, label: descriptor.label });
    return new RemoteBindGroupLayout(this.channel, id, descriptor.label);
  }

  createPipelineLayout(descriptor: GPUPipelineLayoutDescriptor): RemotePipelineLayout {
    const id = this.channel.allocateId();
    const bindGroupLayouts = [...descriptor.bindGroupLayouts].map((l) => (l ? idOf(l, 'GPUBindGroupLayout') : null));
    const immediateSize = optionalUint32(descriptor.immediateSize, 'createPipelineLayout: immediateSize');
    this.channel.record({ op: 'createPipelineLayout', id, bindGroupLayouts, immediateSize, label: descriptor.label });
    return new RemotePipelineLayout(this.channel, id, descriptor.label);
  }

  createComputePipeline(descriptor: GPUComputePipelineDescriptor): RemoteComputePipeline {
    return this.#computePipeline(descriptor, pipelineConstants(descriptor.compute.constants), undefined);
  }

  async createComputePipelineAsync(descriptor: GPUComputePipelineDescriptor): Promise<RemoteComputePipeline> {
    // Converted before anything is sent: a bad constant rejects this promise with a TypeError.
    const constants = pipelineConstants(descriptor.compute.constants);
    const rid = this.channel.allocateRid();
    const reply = this.channel.expectReply(rid);
    const pipeline = this.#computePipeline(descriptor, constants, rid);
    this.channel.flush();
    return this.#pipelineSettled(pipeline, reply);
  }

  /** `pipeline` once the service made it, or the GPUPipelineError it answered (an async pipeline's reply). */
  async #pipelineSettled<P>(pipeline: P, reply: Promise<{ result: unknown }>): Promise<P> {
    let result: unknown;
    try {
      ({ result } = await reply);
    } catch (error) {
      // A lost device still hands out (invalid) pipelines.
      if (this.channel.deviceLost) return pipeline;
      throw error;
    }
    const failure = (result as { error?: GpuErrorJson } | undefined)?.error;
    if (failure) throw new GPUPipelineError(failure.message, { reason: failure.type === 'internal' ? 'internal' : 'validation' });
    return pipeline;
  }

  createBindGroup(descriptor: GPUBindGroupDescriptor): RemoteBindGroup {
    const id = this.channel.allocateId();
    const { command, resources } = bindGroupCommand(id, descriptor);
    this.channel.record(command);
    return new RemoteBindGroup(this.channel, id, descriptor.label, resources);
  }

  createCommandEncoder(descriptorArg?: GPUCommandEncoderDescriptor | null): RemoteCommandEncoder {
    const descriptor = dictionary(descriptorArg);
    const id = this.channel.allocateId();
    this.channel.record({ op: 'createCommandEncoder', id, label: descriptor.label });
    return new RemoteCommandEncoder(this.channel, id, descriptor.label);
  }

  createQuerySet(descriptor: GPUQuerySetDescriptor): RemoteQuerySet {
    const type = enumValue(descriptor.type, QUERY_TYPES, 'createQuerySet: type');
    const count = uint32(descriptor.count, 'createQuerySet: count');
    const id = this.channel.allocateId();
    this.channel.record({ op: 'createQuerySet', id, type, count, label: descriptor.label });
    return new RemoteQuerySet(this.channel, id, type, count, descriptor.label);
  }

  pushErrorScope(filter: GPUErrorFilter): undefined {
    filter = enumValue(filter, ERROR_FILTERS, 'pushErrorScope: filter');
    this.channel.record({ op: 'pushErrorScope', filter });
    return undefined;
  }

  async popErrorScope(): Promise<GPUError | null> {
    const rid = this.channel.allocateRid();
    const reply = this.channel.expectReply(rid);
    this.channel.record({ op: 'popErrorScope', rid });
    this.channel.flush();
    try {
      const { result } = await reply;
      return result ? gpuErrorFromJson(result as GpuErrorJson) : null;
    } catch (error) {
      // A lost device reports no errors, and no empty stack either.
      if (this.channel.deviceLost) return null;
      throw new DOMException((error as Error).message, 'OperationError');
    }
  }

  /**
   * The service destroys every buffer and query set of this device now (their
   * memory returns at once); the job's other devices and its connection stay, so
   * the job can go on or finish and report how it ended. Later calls on this
   * device behave as on a lost device.
   */
  destroy(): undefined {
    this.channel.record({ op: 'destroyDevice' });
    this.channel.markDeviceDestroyed();
    this.#lose('destroyed', 'device was destroyed');
    return undefined;
  }

  createTexture(descriptor: GPUTextureDescriptor): RemoteTexture {
    return new RemoteTexture(this.channel, descriptor, this.#features);
  }

  createSampler(descriptor?: GPUSamplerDescriptor | null): RemoteSampler {
    return new RemoteSampler(this.channel, descriptor);
  }

  createRenderPipeline(descriptor: GPURenderPipelineDescriptor): RemoteRenderPipeline {
    return recordRenderPipeline(this.channel, renderPipelineDescriptor(descriptor, pipelineConstants, this.#features), undefined);
  }

  async createRenderPipelineAsync(descriptor: GPURenderPipelineDescriptor): Promise<RemoteRenderPipeline> {
    // Converted before anything is sent: a bad descriptor rejects this promise with a TypeError.
    const converted = renderPipelineDescriptor(descriptor, pipelineConstants, this.#features);
    const rid = this.channel.allocateRid();
    const reply = this.channel.expectReply(rid);
    const pipeline = recordRenderPipeline(this.channel, converted, rid);
    this.channel.flush();
    return this.#pipelineSettled(pipeline, reply);
  }

  createRenderBundleEncoder(descriptor: GPURenderBundleEncoderDescriptor): RemoteRenderBundleEncoder {
    return new RemoteRenderBundleEncoder(this.channel, descriptor, this.#features);
  }

  importExternalTexture(): never { return unsupported('importExternalTexture'); }

  #computePipeline(descriptor: GPUComputePipelineDescriptor, constants: Record<string, number> | undefined, rid: number | undefined): RemoteComputePipeline {
    const id = this.channel.allocateId();
    this.channel.record({
      op: 'createComputePipeline', id, rid,
      layout: descriptor.layout === 'auto' ? 'auto' : idOf(descriptor.layout, 'GPUPipelineLayout'),
      module: idOf(descriptor.compute.module, 'GPUShaderModule'),
      entryPoint: descriptor.compute.entryPoint, constants, label: descriptor.label,
    });
    return new RemoteComputePipeline(this.channel, id, descriptor.label);
  }

  #uncaptured(json: GpuErrorJson): void {
    const event = new GPUUncapturedErrorEvent('uncapturederror', { error: gpuErrorFromJson(json) });
    const handled = this.#handler !== null || this.#hasListeners;
    this.dispatchEvent(event);
    if (!handled) console.warn(`salus: uncaptured WebGPU ${json.type} error: ${json.message}`);
  }

  #handler: ((event: GPUUncapturedErrorEvent) => unknown) | null = null;
  /** The listener that calls `onuncapturederror`, registered while it is set. */
  #handlerListener: ((event: Event) => void) | null = null;

  /**
   * An event handler attribute, as in HTML: setting it registers one listener
   * in its place among those added by `addEventListener` (then replacing the
   * function keeps that place), and null removes it.
   */
  get onuncapturederror(): ((event: GPUUncapturedErrorEvent) => unknown) | null {
    return this.#handler;
  }

  set onuncapturederror(value: ((event: GPUUncapturedErrorEvent) => unknown) | null) {
    this.#handler = typeof value === 'function' || (typeof value === 'object' && value !== null) ? value : null;
    if (this.#handler && !this.#handlerListener) {
      this.#handlerListener = (event) => { (this.#handler as ((e: Event) => unknown) | null)?.call(this, event); };
      super.addEventListener('uncapturederror', this.#handlerListener);
    } else if (!this.#handler && this.#handlerListener) {
      super.removeEventListener('uncapturederror', this.#handlerListener);
      this.#handlerListener = null;
    }
  }

  #listenerCount = 0;
  get #hasListeners(): boolean {
    return this.#listenerCount > 0;
  }

  override addEventListener(type: string, listener: Parameters<EventTarget["addEventListener"]>[1], options?: Parameters<EventTarget["addEventListener"]>[2]): void {
    if (type === 'uncapturederror' && listener) this.#listenerCount++;
    super.addEventListener(type, listener, options);
  }

  override removeEventListener(type: string, listener: Parameters<EventTarget["addEventListener"]>[1], options?: Parameters<EventTarget["removeEventListener"]>[2]): void {
    if (type === 'uncapturederror' && listener) this.#listenerCount = Math.max(0, this.#listenerCount - 1);
    super.removeEventListener(type, listener, options);
  }

  /**
   * As EventTarget's, but the device's own method, as add/removeEventListener are: a shim that replaces
   * GPUDevice.prototype.dispatchEvent and restores it leaves this one, which still reaches whatever
   * EventTarget.prototype.dispatchEvent is by then (an inherited one restored would be an own copy of the old).
   */
  override dispatchEvent(event: Event): boolean {
    return super.dispatchEvent(event);
  }

  #lose(reason: 'destroyed' | 'unknown', message: string): void {
    if (this.#isLost) return;
    this.#isLost = true;
    this.#resolveLost(deviceLostInfo(reason, message));
  }
}
