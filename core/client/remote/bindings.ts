/**
 * Bind group layout entries and bind group entries as a job's device sends
 * them, converted as WebIDL says: buffer, texture, storage-texture, sampler and
 * external-texture layouts with their defaults filled in; bind group entries
 * that are buffers, textures, texture views or samplers of this device. A bind group of buffers only goes
 * as `createBindGroup` (the hot path, binary); one with a view or a sampler as
 * `createBindGroupOfResources`.
 */
import { RemoteObject, idOf, unsupported } from './base.js';
import { RemoteBuffer } from './buffer.js';
import { RemoteSampler, RemoteTexture, RemoteTextureView, VIEW_DIMENSIONS, textureFormat, type FeatureSet } from './texture.js';
import { enumValue, optionalSize64, uint32 } from './webidl.js';
import type { Command, CommandOf } from '../../protocol/commands.js';

const BUFFER_BINDING_TYPES = ['uniform', 'storage', 'read-only-storage'] as const;
const SAMPLE_TYPES = ['float', 'unfilterable-float', 'depth', 'sint', 'uint'] as const;
const STORAGE_ACCESS = ['write-only', 'read-only', 'read-write'] as const;
const SAMPLER_TYPES = ['filtering', 'non-filtering', 'comparison'] as const;

type WireLayoutEntry = CommandOf<'createBindGroupLayout'>['entries'][number];

/** One GPUBindGroupLayoutEntry as it crosses the wire (`features`: the device's). */
export function layoutEntry(entry: GPUBindGroupLayoutEntry, features: FeatureSet): WireLayoutEntry {
  const what = 'createBindGroupLayout';
  const wire: WireLayoutEntry = { binding: uint32(entry.binding, `${what}: binding`), visibility: uint32(entry.visibility, `${what}: visibility`) };
  if (entry.buffer) {
    const layout = entry.buffer;
    wire.buffer = {
      type: layout.type === undefined ? undefined : enumValue(layout.type, BUFFER_BINDING_TYPES, `${what}: buffer.type`),
      hasDynamicOffset: layout.hasDynamicOffset === undefined ? undefined : Boolean(layout.hasDynamicOffset),
      minBindingSize: optionalSize64(layout.minBindingSize, `${what}: buffer.minBindingSize`),
    };
  }
  if (entry.texture) {
    wire.texture = {
      sampleType: enumValue(entry.texture.sampleType ?? 'float', SAMPLE_TYPES, `${what}: texture.sampleType`),
      viewDimension: enumValue(entry.texture.viewDimension ?? '2d', VIEW_DIMENSIONS, `${what}: texture.viewDimension`),
      multisampled: Boolean(entry.texture.multisampled),
    };
  }
  if (entry.storageTexture) {
    if (entry.storageTexture.format === undefined) throw new TypeError(`${what}: storageTexture has no 'format'`);
    wire.storageTexture = {
      access: enumValue(entry.storageTexture.access ?? 'write-only', STORAGE_ACCESS, `${what}: storageTexture.access`),
      format: textureFormat(entry.storageTexture.format, `${what}: storageTexture.format`, features),
      viewDimension: enumValue(entry.storageTexture.viewDimension ?? '2d', VIEW_DIMENSIONS, `${what}: storageTexture.viewDimension`),
    };
  }
  if (entry.sampler) wire.sampler = { type: enumValue(entry.sampler.type ?? 'filtering', SAMPLER_TYPES, `${what}: sampler.type`) };
  // An external texture binding takes a texture view too; external textures themselves are not served yet.
  if (entry.externalTexture) wire.externalTexture = {};
  return wire;
}

/** A bind group's command, and the objects it must keep alive on this side. */
export interface BindGroupRecord {
  command: Command;
  resources: RemoteObject[];
}

/** The command that makes bind group `id` of `descriptor`. */
export function bindGroupCommand(id: number, descriptor: GPUBindGroupDescriptor): BindGroupRecord {
  const resources: RemoteObject[] = [];
  let buffersOnly = true;
  const entries = [...descriptor.entries].map((entry) => {
    const binding = uint32(entry.binding, 'createBindGroup: binding');
    const resource = entry.resource as unknown;
    if (resource instanceof RemoteTextureView || resource instanceof RemoteSampler || resource instanceof RemoteTexture) {
      resources.push(resource);
      buffersOnly = false;
      if (resource instanceof RemoteSampler) return { binding, sampler: resource.id };
      return resource instanceof RemoteTexture ? { binding, texture: resource.id } : { binding, textureView: resource.id };
    }
    const range = resource !== null && typeof resource === 'object' && 'buffer' in resource && !(resource instanceof RemoteBuffer)
      ? resource as GPUBufferBinding
      : { buffer: resource as GPUBuffer };
    if (!(range.buffer instanceof RemoteBuffer)) unsupported('external-texture (and other non-buffer, non-view, non-sampler) bind group entries');
    resources.push(range.buffer);
    return {
      binding, buffer: idOf(range.buffer, 'GPUBuffer'),
      offset: optionalSize64(range.offset, 'createBindGroup: offset'), size: optionalSize64(range.size, 'createBindGroup: size'),
    };
  });
  const layout = idOf(descriptor.layout, 'GPUBindGroupLayout');
  const command: Command = buffersOnly
    ? { op: 'createBindGroup', id, layout, entries: entries as CommandOf<'createBindGroup'>['entries'], label: descriptor.label }
    : { op: 'createBindGroupOfResources', id, layout, entries, label: descriptor.label };
  return { command, resources };
}
