/**
 * GPUTexture, GPUTextureView and GPUSampler for a job. Descriptors are
 * converted as WebIDL says (defaults filled in, enums and integers checked,
 * TypeError at the call) and sent as one command each; the service's device
 * validates the rest, and its errors come back through error scopes and
 * `uncapturederror` as for any other object. A texture's attributes are its
 * descriptor's; a view holds its texture, so the garbage collector cannot free
 * a texture a live view still shows.
 */
import { RemoteObject } from './base.js';
import type { DeviceChannel } from './channel.js';
import { dictionary, enumValue, optionalUint32, uint32 } from './webidl.js';
import { extent3D } from './texelCopies.js';
import { formatFeatureProblem, TEXTURE_FORMATS } from '../../protocol/textureFormats.js';
import { COMPARE_FUNCTIONS } from '../../protocol/renderDescriptors.js';

const DIMENSIONS = ['1d', '2d', '3d'] as const;
/** GPUTextureViewDimension. */
export const VIEW_DIMENSIONS = ['1d', '2d', '2d-array', 'cube', 'cube-array', '3d'] as const;
const ASPECTS = ['all', 'stencil-only', 'depth-only'] as const;
const ADDRESS_MODES = ['clamp-to-edge', 'repeat', 'mirror-repeat'] as const;
const FILTER_MODES = ['nearest', 'linear'] as const;

/** The features a device was created with (its `features`). */
export type FeatureSet = { has(feature: string): boolean };

/**
 * A GPUTextureFormat argument: a TypeError for a name WebGPU does not define, and (the specification's
 * "validate texture format required features") for one whose feature the device was not created with.
 */
export function textureFormat(value: unknown, what: string, features: FeatureSet): GPUTextureFormat {
  const format = enumValue(value, TEXTURE_FORMATS, what) as GPUTextureFormat;
  const problem = formatFeatureProblem(format, features, what);
  if (problem) throw new TypeError(problem);
  return format;
}

/** A texture's attributes, as its descriptor gave them (defaults filled in). */
interface TextureFields {
  size: [number, number, number];
  mipLevelCount: number;
  sampleCount: number;
  dimension: GPUTextureDimension;
  format: GPUTextureFormat;
  usage: number;
  viewFormats: GPUTextureFormat[];
  textureBindingViewDimension?: string;
}

/** GPUTextureDescriptor as WebIDL converts it. */
function textureFields(descriptor: GPUTextureDescriptor, features: FeatureSet): TextureFields {
  if (descriptor?.size === undefined) throw new TypeError("createTexture: the descriptor has no 'size'");
  if (descriptor.format === undefined) throw new TypeError("createTexture: the descriptor has no 'format'");
  if (descriptor.usage === undefined) throw new TypeError("createTexture: the descriptor has no 'usage'");
  const binding = (descriptor as { textureBindingViewDimension?: unknown }).textureBindingViewDimension;
  return {
    size: extent3D(descriptor.size, 'createTexture: size'),
    mipLevelCount: uint32(descriptor.mipLevelCount ?? 1, 'createTexture: mipLevelCount'),
    sampleCount: uint32(descriptor.sampleCount ?? 1, 'createTexture: sampleCount'),
    dimension: enumValue(descriptor.dimension ?? '2d', DIMENSIONS, 'createTexture: dimension'),
    format: textureFormat(descriptor.format, 'createTexture: format', features),
    usage: uint32(descriptor.usage, 'createTexture: usage'),
    viewFormats: [...(descriptor.viewFormats ?? [])].map((f) => textureFormat(f, 'createTexture: viewFormats', features)),
    ...(binding === undefined ? {} : { textureBindingViewDimension: enumValue(binding, VIEW_DIMENSIONS, 'createTexture: textureBindingViewDimension') }),
  };
}

export class RemoteTexture extends RemoteObject {
  readonly #fields: TextureFields;
  readonly #features: FeatureSet;

  /** `features`: its device's, which decide the formats it and its views may have. */
  constructor(channel: DeviceChannel, descriptor: GPUTextureDescriptor, features: FeatureSet) {
    const fields = textureFields(descriptor, features);
    const id = channel.allocateId();
    super(channel, id, descriptor.label);
    this.#fields = fields;
    this.#features = features;
    const { size, mipLevelCount, sampleCount, dimension, format, usage, viewFormats, textureBindingViewDimension } = fields;
    channel.record({
      op: 'createTexture', id, label: descriptor.label,
      descriptor: { size, mipLevelCount, sampleCount, dimension, format, usage, viewFormats, textureBindingViewDimension },
    });
  }

  get width(): number { return this.#fields.size[0]; }
  get height(): number { return this.#fields.size[1]; }
  get depthOrArrayLayers(): number { return this.#fields.size[2]; }
  get mipLevelCount(): number { return this.#fields.mipLevelCount; }
  get sampleCount(): number { return this.#fields.sampleCount; }
  get dimension(): GPUTextureDimension { return this.#fields.dimension; }
  get format(): GPUTextureFormat { return this.#fields.format; }
  get usage(): number { return this.#fields.usage; }
  get textureBindingViewDimension(): string | undefined { return this.#fields.textureBindingViewDimension; }

  createView(descriptorArg?: GPUTextureViewDescriptor | null): RemoteTextureView {
    const d = dictionary(descriptorArg);
    const swizzle = (d as { swizzle?: unknown }).swizzle;
    const descriptor = {
      format: d.format === undefined ? undefined : textureFormat(d.format, 'createView: format', this.#features),
      dimension: d.dimension === undefined ? undefined : enumValue(d.dimension, VIEW_DIMENSIONS, 'createView: dimension'),
      usage: optionalUint32(d.usage, 'createView: usage'),
      aspect: enumValue(d.aspect ?? 'all', ASPECTS, 'createView: aspect'),
      baseMipLevel: uint32(d.baseMipLevel ?? 0, 'createView: baseMipLevel'),
      mipLevelCount: optionalUint32(d.mipLevelCount, 'createView: mipLevelCount'),
      baseArrayLayer: uint32(d.baseArrayLayer ?? 0, 'createView: baseArrayLayer'),
      arrayLayerCount: optionalUint32(d.arrayLayerCount, 'createView: arrayLayerCount'),
      swizzle: swizzle === undefined ? undefined : swizzleValue(swizzle),
    };
    const id = this.channel.allocateId();
    this.channel.record({ op: 'createView', id, texture: this.id, descriptor, label: d.label });
    return new RemoteTextureView(this.channel, id, d.label, this);
  }

  destroy(): undefined {
    this.channel.record({ op: 'destroy', id: this.id });
    return undefined;
  }
}

/** A view's swizzle: four of r, g, b, a, 0, 1 (a TypeError otherwise, as the string pattern is checked at the call). */
function swizzleValue(value: unknown): string {
  const text = String(value);
  if (!/^[rgba01]{4}$/.test(text)) throw new TypeError(`createView: swizzle '${text}' is not four of r, g, b, a, 0, 1`);
  return text;
}

export class RemoteTextureView extends RemoteObject {
  /** Its texture: kept alive (and undestroyed by the garbage collector) as long as the view. */
  readonly #texture: RemoteTexture;

  constructor(channel: DeviceChannel, id: number, label: string | undefined, texture: RemoteTexture) {
    super(channel, id, label);
    this.#texture = texture;
  }

  /** The texture it shows (not a WebGPU attribute: the remote GPU's own). */
  static textureOf(view: RemoteTextureView): RemoteTexture {
    return view.#texture;
  }
}

export class RemoteSampler extends RemoteObject {
  constructor(channel: DeviceChannel, descriptorArg?: GPUSamplerDescriptor | null) {
    const d = dictionary(descriptorArg);
    const float = (value: unknown, fallback: number, what: string) => {
      const number = Number(value ?? fallback);
      if (!Number.isFinite(number)) throw new TypeError(`createSampler: ${what} ${String(value)} is not a finite number`);
      return Math.fround(number);
    };
    const descriptor = {
      addressModeU: enumValue(d.addressModeU ?? 'clamp-to-edge', ADDRESS_MODES, 'createSampler: addressModeU'),
      addressModeV: enumValue(d.addressModeV ?? 'clamp-to-edge', ADDRESS_MODES, 'createSampler: addressModeV'),
      addressModeW: enumValue(d.addressModeW ?? 'clamp-to-edge', ADDRESS_MODES, 'createSampler: addressModeW'),
      magFilter: enumValue(d.magFilter ?? 'nearest', FILTER_MODES, 'createSampler: magFilter'),
      minFilter: enumValue(d.minFilter ?? 'nearest', FILTER_MODES, 'createSampler: minFilter'),
      mipmapFilter: enumValue(d.mipmapFilter ?? 'nearest', FILTER_MODES, 'createSampler: mipmapFilter'),
      lodMinClamp: float(d.lodMinClamp, 0, 'lodMinClamp'),
      lodMaxClamp: float(d.lodMaxClamp, 32, 'lodMaxClamp'),
      compare: d.compare === undefined ? undefined : enumValue(d.compare, COMPARE_FUNCTIONS, 'createSampler: compare'),
      // [Clamp] unsigned short: clamped into [0, 65535], rounded to even.
      maxAnisotropy: clampUint16(d.maxAnisotropy ?? 1),
    };
    const id = channel.allocateId();
    super(channel, id, d.label);
    channel.record({ op: 'createSampler', id, descriptor, label: d.label });
  }
}

/** WebIDL's [Clamp] unsigned short. */
function clampUint16(value: unknown): number {
  const number = Number(value);
  if (Number.isNaN(number)) return 0;
  const clamped = Math.min(0xffff, Math.max(0, number));
  const floor = Math.floor(clamped);
  const diff = clamped - floor;
  return diff > 0.5 || (diff === 0.5 && floor % 2 === 1) ? floor + 1 : floor;
}

/** The id of a texture argument, or a TypeError. */
export function textureId(value: unknown, what: string): number {
  if (!(value instanceof RemoteTexture)) throw new TypeError(`${what}: expected a GPUTexture from this Salus device`);
  return value.id;
}
