/**
 * The bytes a linear texel copy reads or writes on its buffer side (the
 * specification's "required bytes in copy", counted from the layout's offset):
 * queue.writeTexture's data, copyBufferToTexture's source and
 * copyTextureToBuffer's destination. The job side sends only these bytes of a
 * writeTexture's data; the service holds a pooled buffer's copies to them.
 *
 * Portable: no Node APIs.
 */
import { TEXEL_BLOCKS, type TexelBlock } from './textureFormats.js';

/** A copy's buffer layout: its offset, and the strides when given. */
export interface CopyLayout {
  offset: number;
  bytesPerRow?: number;
  rowsPerImage?: number;
}

/**
 * The texel block a copy of `aspect` of a `format` texture moves (the specification's "texel block copy
 * footprint"), or null where no such copy is valid (depth24plus's depth, a depth-stencil format whole).
 */
export function copyBlock(format: string, aspect: string): TexelBlock | null {
  if (format === 'depth24plus') return null;
  if (format === 'depth24plus-stencil8') return aspect === 'stencil-only' ? { width: 1, height: 1, bytes: 1 } : null;
  if (format === 'depth32float-stencil8') {
    if (aspect === 'stencil-only') return { width: 1, height: 1, bytes: 1 };
    return aspect === 'depth-only' ? { width: 1, height: 1, bytes: 4 } : null;
  }
  return TEXEL_BLOCKS.get(format) ?? null;
}

/**
 * How many bytes past `layout.offset` a copy of `size` ([width, height, depthOrArrayLayers] in texels)
 * reaches: bytesPerRow × rowsPerImage × (images − 1), plus, when it has block rows, bytesPerRow × (block
 * rows − 1) + the last row's bytes; 0 without images. An empty copy still reaches over its whole images
 * (no rows in 5 images of 6 rows is 4 × 6 rows). Null where the copy is the device's validation error
 * whatever the bytes (no valid block for `aspect`, strides missing for several rows or images).
 */
export function bytesInCopy(format: string, aspect: string, layout: CopyLayout, [width, height, depth]: readonly number[]): number | null {
  const block = copyBlock(format, aspect);
  if (!block) return null;
  if (depth === 0) return 0;
  const rows = Math.ceil(height / block.height);
  const lastRowBytes = Math.ceil(width / block.width) * block.bytes;
  // Several rows need bytesPerRow, several images both strides (the device refuses the copy otherwise).
  if ((rows > 1 || depth > 1) && layout.bytesPerRow === undefined) return null;
  if (depth > 1 && layout.rowsPerImage === undefined) return null;
  const bytesPerRow = layout.bytesPerRow ?? 0; // only multiplied by zero when absent
  const images = depth > 1 ? bytesPerRow * layout.rowsPerImage! * (depth - 1) : 0;
  return images + (rows > 0 ? bytesPerRow * (rows - 1) + lastRowBytes : 0);
}

/**
 * The largest texel block copy footprint (rgba32float's and the compressed formats' 16 bytes); every
 * footprint is a power of two up to it, so an offset keeps its alignment to any of them modulo this.
 */
export const MAX_COPY_BLOCK_BYTES = 16;
