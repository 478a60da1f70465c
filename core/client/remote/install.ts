/**
 * Makes a job process look like a browser with WebGPU whose GPU is the service's:
 * `navigator.gpu`, the flag namespaces, and the classes (so `instanceof` checks in
 * libraries such as TensorFlow.js work).
 */
import type { ServiceConnection } from '../connection.js';
import { GPUBufferUsage, GPUColorWrite, GPUMapMode, GPUShaderStage, GPUTextureUsage } from './constants.js';
import { RemoteObject } from './base.js';
import { RemoteBuffer } from './buffer.js';
import { RemoteDevice, RemoteQueue } from './device.js';
import { RemoteCommandEncoder, RemoteComputePassEncoder } from './encoder.js';
import {
  GPUError, GPUInternalError, GPUOutOfMemoryError, GPUPipelineError, GPUUncapturedErrorEvent, GPUValidationError,
} from './errors.js';
import { RemoteAdapter, RemoteGPU } from './gpu.js';
import { DATA_INTERFACES } from './interfaces.js';
import {
  RemoteBindGroup, RemoteBindGroupLayout, RemoteCommandBuffer, RemoteComputePipeline, RemotePipelineLayout,
  RemoteQuerySet, RemoteShaderModule,
} from './objects.js';
import { RemoteSampler, RemoteTexture, RemoteTextureView } from './texture.js';
import { RemoteRenderBundle, RemoteRenderBundleEncoder, RemoteRenderPassEncoder, RemoteRenderPipeline } from './render.js';

/**
 * Interfaces the remote GPU does not serve yet (external textures, canvases). It never makes one, but
 * libraries test `x instanceof GPUTexture` (TF.js does, on every tensor it
 * reads), which throws when the name is not defined at all.
 */
const NEVER_CONSTRUCTED = [
  'GPUExternalTexture', 'GPUCanvasContext',
  // Dawn's own, beside the specification's: a local dawn.node job has them as globals.
  'GPUSubgroupMatrixConfig', 'GPUResourceTable',
];

/** A class named `name` that, like WebGPU's interfaces, cannot be constructed by scripts. */
function illegalConstructor(name: string): new () => object {
  const classes = { [name]: class { constructor() { throw new TypeError('Illegal constructor'); } } };
  return classes[name];
}

/** Gives a class its WebGPU name, as `constructor.name` and in `Object.prototype.toString` ("[object GPUBuffer]"). */
function nameAs(cls: { prototype: object }, name: string): void {
  Object.defineProperty(cls, 'name', { value: name, configurable: true });
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });
}

/** Installs the remote GPU on `globalThis`; returns the `navigator.gpu` object. */
export function installRemoteWebGpu(connection: ServiceConnection): RemoteGPU {
  const gpu = new RemoteGPU(connection);
  const globals: Record<string, unknown> = {
    GPUBufferUsage, GPUMapMode, GPUShaderStage, GPUTextureUsage, GPUColorWrite,
    GPU: RemoteGPU, GPUAdapter: RemoteAdapter, GPUDevice: RemoteDevice, GPUQueue: RemoteQueue,
    GPUBuffer: RemoteBuffer, GPUShaderModule: RemoteShaderModule, GPUBindGroupLayout: RemoteBindGroupLayout,
    GPUPipelineLayout: RemotePipelineLayout, GPUComputePipeline: RemoteComputePipeline, GPUBindGroup: RemoteBindGroup,
    GPUCommandEncoder: RemoteCommandEncoder, GPUComputePassEncoder: RemoteComputePassEncoder,
    GPUCommandBuffer: RemoteCommandBuffer, GPUQuerySet: RemoteQuerySet,
    GPUTexture: RemoteTexture, GPUTextureView: RemoteTextureView, GPUSampler: RemoteSampler,
    GPURenderPipeline: RemoteRenderPipeline, GPURenderPassEncoder: RemoteRenderPassEncoder,
    GPURenderBundle: RemoteRenderBundle, GPURenderBundleEncoder: RemoteRenderBundleEncoder,
    GPUError, GPUValidationError, GPUOutOfMemoryError, GPUInternalError, GPUPipelineError, GPUUncapturedErrorEvent,
    ...DATA_INTERFACES,
  };
  for (const name of NEVER_CONSTRUCTED) globals[name] = illegalConstructor(name);
  // WebIDL puts each interface's attributes on its own prototype (GPUObjectBase's label too), so shims that
  // replace `GPUBuffer.prototype.label` find it there.
  const label = Object.getOwnPropertyDescriptor(RemoteObject.prototype, 'label')!;
  for (const value of Object.values(globals)) {
    if (typeof value === 'function' && value.prototype instanceof RemoteObject) Object.defineProperty(value.prototype, 'label', label);
  }
  for (const [key, value] of Object.entries(globals)) {
    if (typeof value === 'function') nameAs(value, key);
    Object.defineProperty(globalThis, key, { value, configurable: true, writable: true, enumerable: false });
  }
  const existing = (globalThis as { navigator?: object }).navigator;
  if (existing) {
    Object.defineProperty(existing, 'gpu', { value: gpu, configurable: true, enumerable: true });
  } else {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu, userAgent: 'salus' }, configurable: true, writable: true });
  }
  return gpu;
}
