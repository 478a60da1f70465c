/** The bytes a linear texel copy reaches (core/protocol/texelCopyFootprint.ts), against figures worked out by hand. */
import { describe, expect, test } from 'vitest';
import { bytesInCopy, copyBlock } from '../../../core/protocol/texelCopyFootprint.js';

describe('texel copy footprint', () => {
  test('the block a copy moves: the format\'s, one aspect of a depth-stencil format, none for depth24plus', () => {
    expect(copyBlock('rgba8unorm', 'all')?.bytes).toBe(4);
    expect(copyBlock('bc1-rgba-unorm', 'all')).toMatchObject({ width: 4, height: 4, bytes: 8 });
    expect(copyBlock('depth32float-stencil8', 'depth-only')?.bytes).toBe(4);
    expect(copyBlock('depth32float-stencil8', 'stencil-only')?.bytes).toBe(1);
    expect(copyBlock('depth32float-stencil8', 'all')).toBeNull();
    expect(copyBlock('depth24plus-stencil8', 'stencil-only')?.bytes).toBe(1);
    expect(copyBlock('depth24plus-stencil8', 'depth-only')).toBeNull();
    expect(copyBlock('depth24plus', 'all')).toBeNull();
    expect(copyBlock('depth16unorm', 'all')?.bytes).toBe(2);
    expect(copyBlock('no-such-format', 'all')).toBeNull();
  });

  test('required bytes: whole images at rowsPerImage, whole rows at bytesPerRow, the last row only as wide as the copy', () => {
    // One row of 5 rgba8 texels.
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 0 }, [5, 1, 1])).toBe(20);
    // 3 rows of 256-byte stride: two full strides and the last row's 20 bytes.
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 7, bytesPerRow: 256 }, [5, 3, 1])).toBe(2 * 256 + 20);
    // 2 images of 4 rows (rowsPerImage 6): one image of 6 × 256, then 3 × 256 + 20.
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 0, bytesPerRow: 256, rowsPerImage: 6 }, [5, 4, 2])).toBe(6 * 256 + 3 * 256 + 20);
    // bc1 8×8: 2 block rows of 2 blocks of 8 bytes.
    expect(bytesInCopy('bc1-rgba-unorm', 'all', { offset: 0, bytesPerRow: 16 }, [8, 8, 1])).toBe(16 + 16);
    expect(bytesInCopy('depth32float-stencil8', 'stencil-only', { offset: 0, bytesPerRow: 256 }, [3, 2, 1])).toBe(256 + 3);
  });

  test('a copy without images reaches nothing, one empty in width or height spans its strides; a copy the device refuses whatever its bytes has no reach', () => {
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 0 }, [4, 4, 0])).toBe(0);
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 64 }, [0, 1, 1])).toBe(0);
    // Empty in width or height, the copy still spans its rows and images: 4 images of 6 rows, then 3 rows and a row of 0 bytes.
    expect(bytesInCopy('r8unorm', 'all', { offset: 0, bytesPerRow: 3, rowsPerImage: 6 }, [3, 0, 5])).toBe(4 * 6 * 3);
    expect(bytesInCopy('r8unorm', 'all', { offset: 0, bytesPerRow: 3, rowsPerImage: 6 }, [0, 4, 5])).toBe(4 * 6 * 3 + 3 * 3);
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 0 }, [4, 2, 1])).toBeNull(); // two rows without bytesPerRow
    expect(bytesInCopy('rgba8unorm', 'all', { offset: 0, bytesPerRow: 256 }, [4, 1, 2])).toBeNull(); // two images without rowsPerImage
    expect(bytesInCopy('depth24plus', 'all', { offset: 0, bytesPerRow: 256 }, [4, 1, 1])).toBeNull();
  });
});
