/**
 * Texture writes and copies for a job: `queue.writeTexture` and the command
 * encoder's copyBufferToTexture, copyTextureToBuffer and copyTextureToTexture.
 * Their dictionaries (GPUExtent3D, GPUOrigin3D, GPUTexelCopy*) are converted
 * as WebIDL says, so a malformed one throws a TypeError at the call; what the
 * copy's rules refuse is the service's device's validation error, as locally.
 */
import { RemoteObject, idOf } from './base.js';
import type { DeviceChannel } from './channel.js';
import type { Retained } from './objects.js';
import { enumValue, size64, uint32, optionalUint32, bytesOf } from './webidl.js';
import type { TexelCopyBuffer, TexelCopyTexture } from '../../protocol/textureSchemas.js';
import { bytesInCopy, MAX_COPY_BLOCK_BYTES } from '../../protocol/texelCopyFootprint.js';

const ASPECTS = ['all', 'stencil-only', 'depth-only'] as const;

/** A sequence or dictionary of up to three coordinates, as [a, b, c] with `defaults` where absent. */
function triple(
  value: unknown, keys: readonly [string, string, string], defaults: readonly [number, number, number], minLength: number, what: string,
): [number, number, number] {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) throw new TypeError(`${what}: not a sequence or a dictionary`);
  const iterator = (value as { [Symbol.iterator]?: unknown })[Symbol.iterator];
  if (typeof iterator === 'function') {
    const items = [...(value as Iterable<unknown>)];
    if (items.length < minLength || items.length > 3) throw new TypeError(`${what}: a sequence of ${minLength} to 3 numbers, not ${items.length}`);
    return defaults.map((d, i) => (i < items.length ? uint32(items[i], what) : d)) as [number, number, number];
  }
  const dict = value as Record<string, unknown>;
  if (minLength > 0 && dict[keys[0]] === undefined) throw new TypeError(`${what}: the dictionary has no '${keys[0]}'`);
  return keys.map((key, i) => (dict[key] === undefined ? defaults[i] : uint32(dict[key], `${what}.${key}`))) as [number, number, number];
}

/** A GPUExtent3D: [width, height = 1, depthOrArrayLayers = 1]. */
export function extent3D(value: unknown, what: string): [number, number, number] {
  return triple(value, ['width', 'height', 'depthOrArrayLayers'], [0, 1, 1], 1, what);
}

/** A GPUOrigin3D: [x = 0, y = 0, z = 0]. */
function origin3D(value: unknown, what: string): [number, number, number] {
  return triple(value ?? [], ['x', 'y', 'z'], [0, 0, 0], 0, what);
}

/** A GPUTexelCopyTextureInfo, its texture by id (added to `retained`, when given). */
function copyTexture(info: GPUTexelCopyTextureInfo, what: string, retained?: Retained): TexelCopyTexture {
  if (!info || info.texture === undefined) throw new TypeError(`${what}: the dictionary has no 'texture'`);
  retained?.add(info.texture);
  return {
    texture: idOf(info.texture, 'GPUTexture'),
    mipLevel: uint32(info.mipLevel ?? 0, `${what}.mipLevel`),
    origin: origin3D(info.origin, `${what}.origin`),
    aspect: enumValue(info.aspect ?? 'all', ASPECTS, `${what}.aspect`),
  };
}

/** A GPUTexelCopyBufferLayout. */
function copyLayout(layout: GPUTexelCopyBufferLayout, what: string): { offset: number; bytesPerRow?: number; rowsPerImage?: number } {
  const dict = layout ?? {};
  return {
    offset: size64(dict.offset ?? 0, `${what}.offset`),
    bytesPerRow: optionalUint32(dict.bytesPerRow, `${what}.bytesPerRow`),
    rowsPerImage: optionalUint32(dict.rowsPerImage, `${what}.rowsPerImage`),
  };
}

/** A GPUTexelCopyBufferInfo, its buffer by id (added to `retained`). */
function copyBuffer(info: GPUTexelCopyBufferInfo, what: string, retained: Retained): TexelCopyBuffer {
  if (!info || info.buffer === undefined) throw new TypeError(`${what}: the dictionary has no 'buffer'`);
  retained.add(info.buffer);
  return { ...copyLayout(info, what), buffer: idOf(info.buffer, 'GPUBuffer') };
}

/**
 * `queue.writeTexture`: the job's bytes are copied now (the job may change them once this returns). Only the
 * bytes the copy reads cross (from its offset, the required bytes in copy), the offset kept modulo 16 so its
 * alignment to any texel block is unchanged; where that reach is unknown or past the data (the device's
 * validation error), the whole data goes, for the device to judge as a local one would.
 */
export function writeTexture(
  channel: DeviceChannel, destination: GPUTexelCopyTextureInfo, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer,
  layout: GPUTexelCopyBufferLayout, size: GPUExtent3D,
): void {
  const converted = {
    destination: copyTexture(destination, 'writeTexture: destination'),
    layout: copyLayout(layout, 'writeTexture: dataLayout'),
    size: extent3D(size, 'writeTexture: size'),
  };
  const whole = bytesOf('writeTexture', data);
  // copyTexture checked that the destination is this job's texture, whose format is its descriptor's.
  const format = typeof destination.texture.format === 'string' ? destination.texture.format : null;
  const reach = format === null ? null : bytesInCopy(format, converted.destination.aspect, converted.layout, converted.size);
  const { offset } = converted.layout;
  let bytes = whole;
  if (reach !== null && offset + reach <= whole.byteLength) {
    const start = offset - (offset % MAX_COPY_BLOCK_BYTES);
    bytes = whole.subarray(start, offset + reach);
    converted.layout.offset = offset - start;
  }
  const attached = channel.attach(bytes, true);
  channel.record({ op: 'writeTexture', ...converted, data: attached });
  if (!Array.isArray(attached)) channel.flush();
}

/** The encoder's three texture copies, recorded into encoder `encoder`. */
export function recordTextureCopy(
  encoder: RemoteObject, retained: Retained, op: 'copyBufferToTexture' | 'copyTextureToBuffer' | 'copyTextureToTexture',
  source: GPUTexelCopyBufferInfo | GPUTexelCopyTextureInfo, destination: GPUTexelCopyBufferInfo | GPUTexelCopyTextureInfo, size: GPUExtent3D,
): void {
  const extent = extent3D(size, `${op}: copySize`);
  const channel = encoder.channel;
  if (op === 'copyBufferToTexture') {
    const src = copyBuffer(source as GPUTexelCopyBufferInfo, `${op}: source`, retained);
    channel.record({ op, encoder: encoder.id, source: src, destination: copyTexture(destination as GPUTexelCopyTextureInfo, `${op}: destination`, retained), size: extent });
  } else if (op === 'copyTextureToBuffer') {
    const src = copyTexture(source as GPUTexelCopyTextureInfo, `${op}: source`, retained);
    channel.record({ op, encoder: encoder.id, source: src, destination: copyBuffer(destination as GPUTexelCopyBufferInfo, `${op}: destination`, retained), size: extent });
  } else {
    const src = copyTexture(source as GPUTexelCopyTextureInfo, `${op}: source`, retained);
    channel.record({ op, encoder: encoder.id, source: src, destination: copyTexture(destination as GPUTexelCopyTextureInfo, `${op}: destination`, retained), size: extent });
  }
}
