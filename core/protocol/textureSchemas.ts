/**
 * The descriptors of the texture, sampler and texture-copy commands
 * (commandTable.ts, opcodes 41 and up), as zod schemas: they cross the wire as
 * JSON (`json` fields), a cold path next to dispatches. Object ids inside them
 * (a copy's texture or buffer, a bind group entry's view or sampler) are the
 * job's ids, resolved by the executor. The job side converted every value as
 * WebIDL says already; these bound what a hostile peer could send (strict:
 * an unknown key makes the command malformed).
 *
 * Portable: no Node APIs.
 */
import { z } from 'zod';

const u32 = z.number().int().nonnegative().max(0xffffffff);
const u64 = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const id = z.number().int().positive().max(0xffffffff);
const name = z.string().max(64);

/** A GPUExtent3D or GPUOrigin3D, as [width or x, height or y, depthOrArrayLayers or z]. */
export const triple = z.tuple([u32, u32, u32]);

/** GPUTextureDescriptor less its label (and with its size as a triple). */
export const textureDescriptor = z.strictObject({
  size: triple,
  mipLevelCount: u32,
  sampleCount: u32,
  dimension: z.enum(['1d', '2d', '3d']),
  format: name,
  usage: u32,
  viewFormats: z.array(name).max(256),
  textureBindingViewDimension: name.optional(),
});

/** GPUTextureViewDescriptor less its label. */
export const textureViewDescriptor = z.strictObject({
  format: name.optional(),
  dimension: name.optional(),
  usage: u32.optional(),
  aspect: name.optional(),
  baseMipLevel: u32.optional(),
  mipLevelCount: u32.optional(),
  baseArrayLayer: u32.optional(),
  arrayLayerCount: u32.optional(),
  swizzle: z.string().max(4).optional(),
});

/** GPUSamplerDescriptor less its label. */
export const samplerDescriptor = z.strictObject({
  addressModeU: name.optional(),
  addressModeV: name.optional(),
  addressModeW: name.optional(),
  magFilter: name.optional(),
  minFilter: name.optional(),
  mipmapFilter: name.optional(),
  lodMinClamp: z.number().optional(),
  lodMaxClamp: z.number().optional(),
  compare: name.optional(),
  maxAnisotropy: z.number().int().nonnegative().max(0xffff).optional(),
});

/** GPUTexelCopyTextureInfo: `texture` is the job's id. */
export const texelCopyTexture = z.strictObject({ texture: id, mipLevel: u32, origin: triple, aspect: name });

/** GPUTexelCopyBufferLayout. */
export const texelCopyLayout = z.strictObject({ offset: u64, bytesPerRow: u32.optional(), rowsPerImage: u32.optional() });

/** GPUTexelCopyBufferInfo: `buffer` is the job's id. */
export const texelCopyBuffer = texelCopyLayout.extend({ buffer: id });

/** A bind group entry of any resource: a buffer range, a texture view, a sampler or a texture (exactly one, by the job's id). */
export const resourceEntry = z.strictObject({
  binding: u32,
  buffer: id.optional(),
  offset: u64.optional(),
  size: u64.optional(),
  textureView: id.optional(),
  sampler: id.optional(),
  /** A texture bound whole (its default view). */
  texture: id.optional(),
}).refine((e) => [e.buffer, e.textureView, e.sampler, e.texture].filter((r) => r !== undefined).length === 1, 'must name exactly one of buffer, textureView, sampler, texture');

export type TexelCopyTexture = z.infer<typeof texelCopyTexture>;
export type TexelCopyBuffer = z.infer<typeof texelCopyBuffer>;
export type ResourceEntry = z.infer<typeof resourceEntry>;
