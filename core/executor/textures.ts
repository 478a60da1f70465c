/**
 * Replay of textures, texture views, samplers, texture writes and copies, and
 * bind groups with texture or sampler entries (commandTable.ts, opcodes 41 and
 * up). Dawn validates them on the shared device, so its errors reach the job's
 * error scopes as any other; on top of it, as for buffers: ids resolve in the
 * job's table only, a texture's bytes count in the job's ledger (its footprint,
 * core/protocol/textureFormats.ts), the job's own limits and features hold where
 * the shared device's are larger, and a copy through a pooled buffer stays
 * inside the job's size of it.
 */
import type { CommandOf, DataRef } from '../protocol/commands.js';
import { TEXEL_BLOCKS, textureBytes } from '../protocol/textureFormats.js';
import { bytesInCopy } from '../protocol/texelCopyFootprint.js';
import type { ResourceEntry, TexelCopyBuffer, TexelCopyTexture } from '../protocol/textureSchemas.js';
import { bindingSizeLimitError, float32FilterableError, noteDynamicAlignments, textureLimitError, type LimitPair } from './jobLimits.js';
import { ReplayError, type BufferEntry, type DynamicBinding, type Entry, type EntryKind } from './objects.js';
import type { ReplayContext } from './replay.js';

/** What replay.ts lends these handlers (its own helpers, passed in so this module imports nothing of it at run time). */
export interface ReplayHelpers {
  bytesAt(ctx: ReplayContext, ref: DataRef): Uint8Array;
  checkRange(buffer: BufferEntry, offset: number, size: number, what: string): void;
  limitPair(ctx: ReplayContext): LimitPair;
}

type TextureOp = 'createTexture' | 'createView' | 'createSampler' | 'writeTexture' | 'copyBufferToTexture' | 'copyTextureToBuffer'
  | 'copyTextureToTexture' | 'createBindGroupOfResources';
type TextureEntry = Extract<Entry, { kind: 'texture' }>;

const STORAGE_BINDING = 0x08;
const RENDER_ATTACHMENT = 0x10;

/** The objects these commands create, so a failed creation leaves an invalid entry of the right kind. */
export const TEXTURE_CREATES: Partial<Record<TextureOp, EntryKind>> = {
  createTexture: 'texture', createView: 'textureView', createSampler: 'sampler', createBindGroupOfResources: 'bindGroup',
};

/** The commands recorded into an encoder: their failures surface at finish(). */
export const TEXTURE_ENCODER_OPS: Partial<Record<TextureOp, 'encoder'>> = {
  copyBufferToTexture: 'encoder', copyTextureToBuffer: 'encoder', copyTextureToTexture: 'encoder',
};

/** The job destroyed (or dropped) a texture: its memory returns now; views of it fail where they are used, as on a local device. */
export function destroyTexture(ctx: ReplayContext, entry: TextureEntry): void {
  if (entry.destroyed) return;
  entry.destroyed = true;
  if (entry.lease) ctx.memory.freeResource(entry.lease);
  else entry.obj.destroy();
}

/** The highest mip level count a texture of this size may have. */
function maxMipLevels(dimension: string, [width, height, depth]: readonly number[]): number {
  if (dimension === '1d') return 1;
  const largest = dimension === '3d' ? Math.max(width, height, depth) : Math.max(width, height);
  return Math.floor(Math.log2(largest)) + 1;
}

/**
 * Whether the descriptor is one Dawn could accept, as far as its footprint goes: then it is counted. One
 * it must refuse (empty, too many mips, past the shared device's limits) holds no memory and is not.
 */
function countable(ctx: ReplayContext, d: CommandOf<'createTexture'>['descriptor']): boolean {
  const limits = ctx.device.limits;
  const [width, height, depth] = d.size;
  const most = d.dimension === '1d' ? limits.maxTextureDimension1D : d.dimension === '2d' ? limits.maxTextureDimension2D : limits.maxTextureDimension3D;
  if (width < 1 || height < 1 || depth < 1 || d.usage === 0 || (d.sampleCount !== 1 && d.sampleCount !== 4)) return false;
  if (Math.max(width, d.dimension === '1d' ? 1 : height, d.dimension === '3d' ? depth : 1) > most) return false;
  if (d.dimension !== '3d' && depth > limits.maxTextureArrayLayers) return false;
  return d.mipLevelCount >= 1 && d.mipLevelCount <= maxMipLevels(d.dimension, d.size);
}

/** Why the job's device, made without some feature, would refuse this texture; null when it would not. */
function featureError(ctx: ReplayContext, d: CommandOf<'createTexture'>['descriptor']): string | null {
  const features = ctx.table.device?.features;
  if (!features) return null;
  const need = (feature: string, why: string) => (features.has(feature) ? null : `createTexture: ${why} needs the '${feature}' feature, which requestDevice did not ask for`);
  for (const format of [d.format, ...d.viewFormats]) {
    const feature = TEXEL_BLOCKS.get(format)?.feature;
    if (feature) return need(feature, `format '${format}'`);
  }
  if (d.format === 'bgra8unorm' && d.usage & STORAGE_BINDING) return need('bgra8unorm-storage', "a 'bgra8unorm' storage texture");
  if (d.format === 'rg11b10ufloat' && d.usage & RENDER_ATTACHMENT) return need('rg11b10ufloat-renderable', "a 'rg11b10ufloat' render attachment");
  if (d.dimension === '3d' && d.format.startsWith('bc')) return need('texture-compression-bc-sliced-3d', 'a 3d texture of a BC format');
  if (d.dimension === '3d' && d.format.startsWith('astc')) return need('texture-compression-astc-sliced-3d', 'a 3d texture of an ASTC format');
  return null;
}

const extent = ([width, height, depthOrArrayLayers]: readonly number[]): GPUExtent3DDict => ({ width, height, depthOrArrayLayers });

/** A copy's texture side, with the job's texture id resolved. */
function copyTexture(ctx: ReplayContext, info: TexelCopyTexture): GPUTexelCopyTextureInfo & { texture: GPUTexture } {
  const [x, y, z] = info.origin;
  return { texture: ctx.table.get(info.texture, 'texture').obj, mipLevel: info.mipLevel, origin: { x, y, z }, aspect: info.aspect as GPUTextureAspect };
}

/** The buffer side of a copy: resolved, noted as used by the encoder, and held to the job's size of a pooled buffer. */
function copyBuffer(
  ctx: ReplayContext, helpers: ReplayHelpers, encoder: { used: Set<BufferEntry> }, info: TexelCopyBuffer,
  texture: { texture: GPUTexture; aspect?: GPUTextureAspect }, size: readonly number[], what: string,
): GPUTexelCopyBufferInfo {
  const buffer = ctx.table.get(info.buffer, 'buffer');
  const reach = buffer.lease?.pooled ? bytesInCopy(texture.texture.format, texture.aspect ?? 'all', info, size) : null;
  if (reach !== null) helpers.checkRange(buffer, info.offset, reach, what);
  encoder.used.add(buffer);
  return { buffer: buffer.obj, offset: info.offset, bytesPerRow: info.bytesPerRow, rowsPerImage: info.rowsPerImage };
}

/** A bind group entry's texture view, or its texture bound whole, with the format it shows. */
function boundTexture(ctx: ReplayContext, entry: ResourceEntry): { resource: GPUTextureView | GPUTexture; format: string } {
  if (entry.texture !== undefined) {
    const texture = ctx.table.get(entry.texture, 'texture').obj;
    return { resource: texture, format: texture.format };
  }
  const view = ctx.table.get(entry.textureView!, 'textureView');
  return { resource: view.obj, format: view.format };
}

type Handler<K extends TextureOp> = (ctx: ReplayContext, cmd: CommandOf<K>) => void;

/** The handlers of the texture commands, for replay.ts's table. */
export function textureHandlers(helpers: ReplayHelpers): { [K in TextureOp]: Handler<K> } {
  return {
    createTexture(ctx, cmd) {
      const d = cmd.descriptor;
      const descriptor: GPUTextureDescriptor = {
        size: extent(d.size), mipLevelCount: d.mipLevelCount, sampleCount: d.sampleCount, dimension: d.dimension,
        format: d.format as GPUTextureFormat, usage: d.usage, viewFormats: d.viewFormats as GPUTextureFormat[], label: cmd.label,
        ...(d.textureBindingViewDimension === undefined ? {} : { textureBindingViewDimension: d.textureBindingViewDimension as GPUTextureViewDimension }),
      };
      const refusal = featureError(ctx, d) ?? textureLimitError(helpers.limitPair(ctx), d.dimension, d.size);
      if (refusal) throw new ReplayError(refusal);
      const bytes = countable(ctx, d) ? textureBytes({ ...d, width: d.size[0], height: d.size[1], depthOrArrayLayers: d.size[2] }) : null;
      if (bytes === null) {
        // Dawn's error texture holds no memory, and its own message reaches the job.
        ctx.table.set(cmd.id, { kind: 'texture', obj: ctx.device.createTexture(descriptor), lease: null, destroyed: false });
        return;
      }
      const result = ctx.memory.allocateResource(ctx.jobId, 'texture', bytes, () => ctx.device.createTexture(descriptor));
      if (!result.ok) throw new ReplayError(result.message, result.errorType);
      ctx.table.set(cmd.id, { kind: 'texture', obj: result.lease.resource, lease: result.lease, destroyed: false });
    },

    createView(ctx, cmd) {
      const texture = ctx.table.get(cmd.texture, 'texture');
      const swizzle = cmd.descriptor?.swizzle;
      if (swizzle !== undefined && swizzle !== 'rgba' && ctx.table.device && !ctx.table.device.features.has('texture-component-swizzle')) {
        throw new ReplayError("createView: a swizzle needs the 'texture-component-swizzle' feature, which requestDevice did not ask for");
      }
      const obj = texture.obj.createView({ ...(cmd.descriptor as GPUTextureViewDescriptor | undefined), label: cmd.label });
      ctx.table.set(cmd.id, { kind: 'textureView', obj, format: cmd.descriptor?.format ?? texture.obj.format });
    },

    createSampler(ctx, cmd) {
      ctx.table.set(cmd.id, { kind: 'sampler', obj: ctx.device.createSampler({ ...(cmd.descriptor as GPUSamplerDescriptor | undefined), label: cmd.label }) });
    },

    writeTexture(ctx, cmd) {
      const destination = copyTexture(ctx, cmd.destination);
      ctx.device.queue.writeTexture(destination, helpers.bytesAt(ctx, cmd.data), cmd.layout, extent(cmd.size));
    },

    copyBufferToTexture(ctx, cmd) {
      const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
      const destination = copyTexture(ctx, cmd.destination);
      const source = copyBuffer(ctx, helpers, encoder, cmd.source, destination, cmd.size, 'copyBufferToTexture source');
      encoder.obj.copyBufferToTexture(source, destination, extent(cmd.size));
    },

    copyTextureToBuffer(ctx, cmd) {
      const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
      const source = copyTexture(ctx, cmd.source);
      const destination = copyBuffer(ctx, helpers, encoder, cmd.destination, source, cmd.size, 'copyTextureToBuffer destination');
      encoder.obj.copyTextureToBuffer(source, destination, extent(cmd.size));
    },

    copyTextureToTexture(ctx, cmd) {
      const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
      encoder.obj.copyTextureToTexture(copyTexture(ctx, cmd.source), copyTexture(ctx, cmd.destination), extent(cmd.size));
    },

    createBindGroupOfResources(ctx, cmd) {
      const layout = ctx.table.get(cmd.layout, 'bindGroupLayout');
      const buffers: BufferEntry[] = [];
      const dynamic: DynamicBinding[] = [];
      const entries = cmd.entries.map((entry): GPUBindGroupEntry => {
        if (entry.textureView !== undefined || entry.texture !== undefined) {
          const { resource, format } = boundTexture(ctx, entry);
          const refusal = float32FilterableError(ctx.table.device?.features, layout.obj, entry.binding, format);
          if (refusal) throw new ReplayError(refusal);
          return { binding: entry.binding, resource };
        }
        if (entry.sampler !== undefined) return { binding: entry.binding, resource: ctx.table.get(entry.sampler, 'sampler').obj };
        const buffer = ctx.table.get(entry.buffer!, 'buffer');
        buffers.push(buffer);
        const offset = entry.offset ?? 0;
        // A pooled buffer is bound with the job's size (as createBindGroup does), so arrayLength() sees it.
        const size = entry.size ?? (buffer.lease?.pooled ? Math.max(0, buffer.sizeBytes - offset) : undefined);
        if (buffer.lease?.pooled) helpers.checkRange(buffer, offset, size!, `createBindGroup binding ${entry.binding}`);
        const boundBytes = size ?? Math.max(0, buffer.sizeBytes - offset);
        const limitError = bindingSizeLimitError(helpers.limitPair(ctx), layout.obj, entry.binding, offset, boundBytes);
        if (limitError) throw new ReplayError(limitError);
        if (layout.dynamicBindings.includes(entry.binding)) dynamic.push({ binding: entry.binding, buffer, offsetBytes: offset, sizeBytes: boundBytes });
        return { binding: entry.binding, resource: { buffer: buffer.obj, offset, size } };
      });
      dynamic.sort((a, b) => a.binding - b.binding);
      const obj = ctx.device.createBindGroup({ layout: layout.obj, entries, label: cmd.label });
      if (dynamic.length > 0) noteDynamicAlignments(helpers.limitPair(ctx), obj, layout.obj, dynamic.map((d) => d.binding));
      ctx.table.set(cmd.id, { kind: 'bindGroup', obj, buffers, dynamic, builtOn: buffers.map((b) => b.obj), usedBy: undefined, currentAt: -1 });
    },
  };
}
