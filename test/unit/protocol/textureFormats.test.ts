/** Texel blocks and texture footprints (core/protocol/textureFormats.ts), against figures worked out by hand. */
import { describe, expect, test } from 'vitest';
import { TEXEL_BLOCKS, TEXTURE_FORMATS, textureBytes, type TextureShape } from '../../../core/protocol/textureFormats.js';

const shape = (over: Partial<TextureShape>): TextureShape => ({
  format: 'rgba8unorm', dimension: '2d', width: 1, height: 1, depthOrArrayLayers: 1, mipLevelCount: 1, sampleCount: 1, ...over,
});

describe('texture formats', () => {
  test('blocks of plain, depth and compressed formats, with the feature each needs', () => {
    expect(TEXEL_BLOCKS.get('r8unorm')).toMatchObject({ width: 1, height: 1, bytes: 1 });
    expect(TEXEL_BLOCKS.get('rgba32float')).toMatchObject({ bytes: 16 });
    expect(TEXEL_BLOCKS.get('bc1-rgba-unorm-srgb')).toEqual({ width: 4, height: 4, bytes: 8, feature: 'texture-compression-bc' });
    expect(TEXEL_BLOCKS.get('astc-10x6-unorm')).toEqual({ width: 10, height: 6, bytes: 16, feature: 'texture-compression-astc' });
    expect(TEXEL_BLOCKS.get('eac-rg11snorm')).toMatchObject({ bytes: 16, feature: 'texture-compression-etc2' });
    expect(TEXEL_BLOCKS.get('depth32float-stencil8')?.feature).toBe('depth32float-stencil8');
    expect(TEXTURE_FORMATS).toHaveLength(new Set(TEXTURE_FORMATS).size);
    expect(TEXTURE_FORMATS.length).toBeGreaterThan(90);
  });

  test('footprints: mips halve (at least 1), layers multiply, 3d depth halves, samples multiply, blocks round up', () => {
    expect(textureBytes(shape({ width: 64, height: 64 }))).toBe(16384);
    // 64² + 32² + … + 1² texels of 4 bytes.
    expect(textureBytes(shape({ width: 64, height: 64, mipLevelCount: 7 }))).toBe(4 * (4096 + 1024 + 256 + 64 + 16 + 4 + 1));
    expect(textureBytes(shape({ width: 8, height: 2, mipLevelCount: 4 }))).toBe(4 * (16 + 4 + 2 + 1));
    expect(textureBytes(shape({ width: 4, height: 4, depthOrArrayLayers: 6, mipLevelCount: 2 }))).toBe(4 * 6 * (16 + 4));
    expect(textureBytes(shape({ dimension: '3d', width: 4, height: 4, depthOrArrayLayers: 4, mipLevelCount: 3 }))).toBe(4 * (64 + 8 + 1));
    expect(textureBytes(shape({ dimension: '1d', width: 100, height: 1 }))).toBe(400);
    expect(textureBytes(shape({ width: 16, height: 16, sampleCount: 4 }))).toBe(16 * 16 * 4 * 4);
    // 5×5 texels of bc1 are 2×2 blocks of 8 bytes; astc-12x12 rounds 13 up to two blocks.
    expect(textureBytes(shape({ format: 'bc1-rgba-unorm', width: 5, height: 5 }))).toBe(32);
    expect(textureBytes(shape({ format: 'astc-12x12-unorm', width: 13, height: 12 }))).toBe(32);
    expect(textureBytes(shape({ format: 'no-such-format' }))).toBeNull();
  });
});
