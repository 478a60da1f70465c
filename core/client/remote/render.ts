/**
 * Render for a job: render pipelines, render passes, render bundles and their
 * encoders. Every call becomes a recorded command (nothing waits but
 * createRenderPipelineAsync); descriptors cross as JSON in which each GPU
 * object is a reference by id (core/protocol/objectRefs.ts). Integers are
 * converted as WebIDL says at the call; the rest of a descriptor the service's
 * device validates, and its errors come back through error scopes and
 * `uncapturederror` as for compute. Passes and bundle encoders keep what they
 * use alive until their command buffer is submitted.
 */
import { RemoteObject, idOf } from './base.js';
import type { DeviceChannel } from './channel.js';
import { RemoteBindGroupLayout, RemotePipelineLayout, RemoteQuerySet, RemoteShaderModule, type Retained } from './objects.js';
import { RemoteSampler, RemoteTexture, RemoteTextureView, type FeatureSet } from './texture.js';
import { dynamicOffsetsOf } from './dynamicOffsets.js';
import { bytesOf, dictionary, enumValue, optionalSize64, size64, uint32, wrappedUint32 } from './webidl.js';
import { MAX_DESCRIPTOR_DEPTH, type ObjectRef, type RefKind } from '../../protocol/objectRefs.js';
import { INDEX_FORMATS, renderDescriptorProblem, type RenderDescriptorKind } from '../../protocol/renderDescriptors.js';

const REF_CLASSES: ReadonlyArray<[new (...args: never[]) => RemoteObject, RefKind]> = [
  [RemoteShaderModule, 'shaderModule'], [RemotePipelineLayout, 'pipelineLayout'], [RemoteBindGroupLayout, 'bindGroupLayout'],
  [RemoteTexture, 'texture'], [RemoteTextureView, 'textureView'], [RemoteQuerySet, 'querySet'], [RemoteSampler, 'sampler'],
];

/**
 * A descriptor as JSON: dictionaries (their own and inherited members) and sequences copied, each remote
 * object a reference, each object added to `retained`. A TypeError for what no descriptor holds.
 */
export function describe(value: unknown, what: string, retained?: Retained, depth = 0): unknown {
  if (depth > MAX_DESCRIPTOR_DEPTH) throw new TypeError(`${what}: the descriptor nests too deep`);
  if (value === null || value === undefined || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${what}: ${value} is not a finite number`);
    return value;
  }
  if (value instanceof RemoteObject) {
    const kind = REF_CLASSES.find(([cls]) => value instanceof cls)?.[1];
    if (!kind) throw new TypeError(`${what}: a ${value.constructor.name} cannot be named in a descriptor`);
    retained?.add(value);
    return { $ref: value.id, $kind: kind } satisfies ObjectRef;
  }
  if (typeof value !== 'object') throw new TypeError(`${what}: ${typeof value} is not a descriptor value`);
  if (Symbol.iterator in value) return [...(value as Iterable<unknown>)].map((item) => describe(item, what, retained, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = describe((value as Record<string, unknown>)[key], `${what}.${key}`, retained, depth + 1);
  return out;
}

/**
 * A described render descriptor checked as WebIDL converts it: a TypeError for a missing required member, a
 * value outside its enum, or a texture format whose feature the device (`features`) lacks.
 */
function checked(kind: RenderDescriptorKind, described: Record<string, unknown>, features?: FeatureSet): Record<string, unknown> {
  const problem = renderDescriptorProblem(kind, described, features);
  if (problem) throw new TypeError(problem);
  return described;
}

export class RemoteRenderPipeline extends RemoteObject {
  /** The layout of bind group `index`: a new object on every call, as in browsers. */
  getBindGroupLayout(index: number): RemoteBindGroupLayout {
    const id = this.channel.allocateId();
    this.channel.record({ op: 'renderPipelineBindGroupLayout', id, pipeline: this.id, index: wrappedUint32(index) });
    return new RemoteBindGroupLayout(this.channel, id, '');
  }
}

/** A render pipeline's descriptor as it crosses the wire, and its label. */
export interface RenderPipelineWire {
  descriptor: Record<string, unknown>;
  label?: string;
}

/**
 * Converts a render pipeline descriptor (a TypeError for a bad one); `constants` converts each stage's constants,
 * `features` are the device's (for the formats it names).
 */
export function renderPipelineDescriptor(
  descriptor: GPURenderPipelineDescriptor, constants: (value: unknown) => Record<string, number> | undefined, features: FeatureSet,
): RenderPipelineWire {
  const d = dictionary(descriptor);
  const stage = <S extends GPUProgrammableStage>(state: S | undefined) => (state ? { ...state, constants: constants(state.constants) } : undefined);
  const { label, ...rest } = d;
  const described = describe({ ...rest, vertex: stage(d.vertex), fragment: stage(d.fragment) }, 'createRenderPipeline') as Record<string, unknown>;
  return { descriptor: checked('createRenderPipeline', described, features), label };
}

/** Records the creation of a render pipeline (`rid` for the async one). */
export function recordRenderPipeline(channel: DeviceChannel, wire: RenderPipelineWire, rid: number | undefined): RemoteRenderPipeline {
  const id = channel.allocateId();
  channel.record({ op: 'createRenderPipeline', id, rid, descriptor: wire.descriptor, label: wire.label });
  return new RemoteRenderPipeline(channel, id, wire.label);
}

/** What render passes and render bundle encoders both record (WebGPU's GPURenderCommandsMixin and its kin). */
class RemoteRenderCommands extends RemoteObject {
  readonly #retained: Retained;

  constructor(channel: DeviceChannel, id: number, label: string | undefined, retained: Retained, tracked: boolean) {
    super(channel, id, label, tracked);
    this.#retained = retained;
  }

  protected get retained(): Retained { return this.#retained; }

  setPipeline(pipeline: GPURenderPipeline): undefined {
    this.channel.record({ op: 'renderSetPipeline', pass: this.id, pipeline: idOf(pipeline, 'GPURenderPipeline') });
    return undefined;
  }

  setBindGroup(indexArg: number, bindGroup: GPUBindGroup | null, offsets?: Iterable<number> | Uint32Array, start?: number, length?: number): undefined {
    const index = uint32(indexArg, 'setBindGroup: index');
    const dynamicOffsets = dynamicOffsetsOf(offsets, start, length);
    if (bindGroup) this.#retained.add(bindGroup);
    this.channel.record({
      op: 'renderSetBindGroup', pass: this.id, index, bindGroup: bindGroup === null ? null : idOf(bindGroup, 'GPUBindGroup'),
      dynamicOffsets: dynamicOffsets?.length ? dynamicOffsets : undefined,
    });
    return undefined;
  }

  setVertexBuffer(slotArg: number, buffer: GPUBuffer | null, offset = 0, size?: number): undefined {
    const slot = uint32(slotArg, 'setVertexBuffer: slot');
    if (buffer) this.#retained.add(buffer);
    this.channel.record({
      op: 'setVertexBuffer', pass: this.id, slot, buffer: buffer === null ? null : idOf(buffer, 'GPUBuffer'),
      offset: size64(offset, 'setVertexBuffer: offset'), size: optionalSize64(size, 'setVertexBuffer: size'),
    });
    return undefined;
  }

  setIndexBuffer(buffer: GPUBuffer, formatArg: GPUIndexFormat, offset = 0, size?: number): undefined {
    const format = enumValue(formatArg, INDEX_FORMATS, 'setIndexBuffer: indexFormat');
    this.#retained.add(buffer);
    this.channel.record({
      op: 'setIndexBuffer', pass: this.id, buffer: idOf(buffer, 'GPUBuffer'), format,
      offset: size64(offset, 'setIndexBuffer: offset'), size: optionalSize64(size, 'setIndexBuffer: size'),
    });
    return undefined;
  }

  /** Immediate data for the draws after it (`dataOffset` and `size` in elements of a typed array, else bytes). */
  setImmediates(rangeOffset: number, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer, dataOffset?: number, size?: number): undefined {
    const offset = uint32(rangeOffset, 'setImmediates: rangeOffset');
    const bytes = bytesOf('setImmediates', data, optionalSize64(dataOffset, 'setImmediates: dataOffset'), optionalSize64(size, 'setImmediates: size'));
    this.channel.record({ op: 'renderSetImmediates', pass: this.id, offset, data: this.channel.attach(bytes, true) });
    return undefined;
  }

  draw(vertexCount: number, instanceCount = 1, firstVertex = 0, firstInstance = 0): undefined {
    this.channel.record({
      op: 'draw', pass: this.id, vertexCount: uint32(vertexCount, 'draw: vertexCount'), instanceCount: uint32(instanceCount, 'draw: instanceCount'),
      firstVertex: uint32(firstVertex, 'draw: firstVertex'), firstInstance: uint32(firstInstance, 'draw: firstInstance'),
    });
    return undefined;
  }

  drawIndexed(indexCount: number, instanceCount = 1, firstIndex = 0, baseVertex = 0, firstInstance = 0): undefined {
    this.channel.record({
      op: 'drawIndexed', pass: this.id, indexCount: uint32(indexCount, 'drawIndexed: indexCount'),
      instanceCount: uint32(instanceCount, 'drawIndexed: instanceCount'), firstIndex: uint32(firstIndex, 'drawIndexed: firstIndex'),
      baseVertex: int32(baseVertex, 'drawIndexed: baseVertex') >>> 0, firstInstance: uint32(firstInstance, 'drawIndexed: firstInstance'),
    });
    return undefined;
  }

  drawIndirect(buffer: GPUBuffer, offset: number): undefined {
    return this.#indirect(buffer, offset, false);
  }

  drawIndexedIndirect(buffer: GPUBuffer, offset: number): undefined {
    return this.#indirect(buffer, offset, true);
  }

  #indirect(buffer: GPUBuffer, offset: number, indexed: boolean): undefined {
    const at = size64(offset, indexed ? 'drawIndexedIndirect: indirectOffset' : 'drawIndirect: indirectOffset');
    this.#retained.add(buffer);
    this.channel.record({ op: 'drawIndirect', pass: this.id, buffer: idOf(buffer, 'GPUBuffer'), offset: at, indexed: indexed || undefined });
    return undefined;
  }

  pushDebugGroup(label: string): undefined { return this.#marker('push', label); }
  popDebugGroup(): undefined { return this.#marker('pop'); }
  insertDebugMarker(label: string): undefined { return this.#marker('insert', label); }

  #marker(kind: 'push' | 'pop' | 'insert', label?: string): undefined {
    this.channel.record({ op: 'debugMarker', target: this.id, kind, label });
    return undefined;
  }
}

/** An `[EnforceRange] long`. */
function int32(value: unknown, what: string): number {
  const number = Number(value);
  if (!Number.isFinite(number)) throw new TypeError(`${what}: ${String(value)} is not a finite number`);
  const integer = Math.trunc(number);
  if (integer < -(2 ** 31) || integer > 2 ** 31 - 1) throw new TypeError(`${what}: ${integer} is outside [-2^31, 2^31 - 1]`);
  return integer;
}

/** A float argument (WebIDL `float`/`double`): a TypeError for NaN and ±Infinity. */
function finite(value: unknown, what: string): number {
  const number = Number(value);
  if (!Number.isFinite(number)) throw new TypeError(`${what}: ${String(value)} is not a finite number`);
  return number;
}

export class RemoteRenderPassEncoder extends RemoteRenderCommands {
  constructor(channel: DeviceChannel, id: number, label: string | undefined, retained: Retained) {
    // Freed with its encoder, on the service: never sent on its own.
    super(channel, id, label, retained, false);
  }

  setViewport(x: number, y: number, width: number, height: number, minDepth: number, maxDepth: number): undefined {
    const values = [x, y, width, height, minDepth, maxDepth].map((v, i) => finite(v, `setViewport: argument ${i + 1}`));
    this.channel.record({ op: 'setPassState', pass: this.id, kind: 'viewport', values });
    return undefined;
  }

  setScissorRect(x: number, y: number, width: number, height: number): undefined {
    const values = [x, y, width, height].map((v, i) => uint32(v, `setScissorRect: argument ${i + 1}`));
    this.channel.record({ op: 'setPassState', pass: this.id, kind: 'scissorRect', values });
    return undefined;
  }

  setBlendConstant(color: GPUColor): undefined {
    const c = color as unknown as Record<string, unknown>;
    const parts = Symbol.iterator in Object(color) ? [...(color as Iterable<unknown>)] : [c.r, c.g, c.b, c.a];
    if (parts.length !== 4 || parts.some((p) => p === undefined)) throw new TypeError('setBlendConstant: a GPUColor has four components');
    this.channel.record({ op: 'setPassState', pass: this.id, kind: 'blendConstant', values: parts.map((p) => finite(p, 'setBlendConstant')) });
    return undefined;
  }

  setStencilReference(reference: number): undefined {
    this.channel.record({ op: 'setPassState', pass: this.id, kind: 'stencilReference', values: [uint32(reference, 'setStencilReference: reference')] });
    return undefined;
  }

  beginOcclusionQuery(queryIndex: number): undefined {
    this.channel.record({ op: 'occlusionQuery', pass: this.id, index: uint32(queryIndex, 'beginOcclusionQuery: queryIndex') });
    return undefined;
  }

  endOcclusionQuery(): undefined {
    this.channel.record({ op: 'occlusionQuery', pass: this.id });
    return undefined;
  }

  executeBundles(bundles: Iterable<GPURenderBundle>): undefined {
    const list = [...bundles];
    for (const bundle of list) this.retained.add(bundle);
    this.channel.record({ op: 'executeBundles', pass: this.id, bundles: list.map((b) => idOf(b, 'GPURenderBundle')) });
    return undefined;
  }

  end(): undefined {
    this.channel.record({ op: 'endRenderPass', pass: this.id });
    return undefined;
  }
}

/** `encoder.beginRenderPass(descriptor)`: recorded into `encoder`, what it names kept in `retained`. */
export function beginRenderPass(encoder: RemoteObject, retained: Retained, descriptorArg: GPURenderPassDescriptor): RemoteRenderPassEncoder {
  const d = dictionary(descriptorArg);
  const { label, ...rest } = d;
  const descriptor = checked('beginRenderPass', describe(rest, 'beginRenderPass', retained) as Record<string, unknown>);
  const id = encoder.channel.allocateId();
  encoder.channel.record({ op: 'beginRenderPass', id, encoder: encoder.id, descriptor, label });
  return new RemoteRenderPassEncoder(encoder.channel, id, label, retained);
}

export class RemoteRenderBundle extends RemoteObject {
  readonly #retained: Retained;

  constructor(channel: DeviceChannel, id: number, label: string | undefined, retained: Retained) {
    super(channel, id, label);
    this.#retained = retained;
  }
}

export class RemoteRenderBundleEncoder extends RemoteRenderCommands {
  /** `features`: the device's, for the formats the descriptor names. */
  constructor(channel: DeviceChannel, descriptorArg: GPURenderBundleEncoderDescriptor, features: FeatureSet) {
    const d = dictionary(descriptorArg);
    const { label, ...rest } = d;
    const descriptor = checked('createRenderBundleEncoder', describe(rest, 'createRenderBundleEncoder') as Record<string, unknown>, features);
    const id = channel.allocateId();
    super(channel, id, label, new Set(), true);
    channel.record({ op: 'createRenderBundleEncoder', id, descriptor, label });
  }

  finish(descriptorArg?: GPURenderBundleDescriptor | null): RemoteRenderBundle {
    const descriptor = dictionary(descriptorArg);
    const id = this.channel.allocateId();
    this.channel.record({ op: 'finishRenderBundle', encoder: this.id, id, label: descriptor.label });
    // The service freed the bundle encoder at finish.
    this.untrack();
    return new RemoteRenderBundle(this.channel, id, descriptor.label, this.retained);
  }
}
