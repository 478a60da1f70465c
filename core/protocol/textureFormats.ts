/**
 * WebGPU's texture formats as both ends need them: the names a job may pass
 * (WebIDL's GPUTextureFormat enum, checked on the job side), the feature a
 * format needs, and each format's texel block (its width, height and bytes),
 * from which a texture's footprint in the job's memory ledger is computed.
 *
 * Portable: no Node APIs.
 */

/** A format's texel block: `width`×`height` texels in `bytes` bytes; `feature` is what the device must have. */
export interface TexelBlock {
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
  readonly feature?: string;
}

const plain = (bytes: number, feature?: string): TexelBlock => ({ width: 1, height: 1, bytes, feature });

/** Block-compressed formats of one block size; with `srgb`, each also has its `-srgb` twin. */
function compressed(names: readonly string[], width: number, height: number, bytes: number, feature: string, srgb: boolean): [string, TexelBlock][] {
  const block = { width, height, bytes, feature };
  return names.flatMap((name) => (srgb ? [name, `${name}-srgb`] : [name]).map((n): [string, TexelBlock] => [n, block]));
}

const ASTC_BLOCKS = ['4x4', '5x4', '5x5', '6x5', '6x6', '8x5', '8x6', '8x8', '10x5', '10x6', '10x8', '10x10', '12x10', '12x12'];

/**
 * Every GPUTextureFormat. Depth formats without a defined size count what an
 * implementation keeps (24-bit depth in 4 bytes, depth with stencil padded to 8).
 */
export const TEXEL_BLOCKS: ReadonlyMap<string, TexelBlock> = new Map<string, TexelBlock>([
  ...['r8unorm', 'r8snorm', 'r8uint', 'r8sint', 'stencil8'].map((n) => [n, plain(1)] as [string, TexelBlock]),
  ...['r16uint', 'r16sint', 'r16float', 'rg8unorm', 'rg8snorm', 'rg8uint', 'rg8sint', 'depth16unorm'].map((n) => [n, plain(2)] as [string, TexelBlock]),
  ...['r16unorm', 'r16snorm'].map((n) => [n, plain(2, 'texture-formats-tier1')] as [string, TexelBlock]),
  ...[
    'r32uint', 'r32sint', 'r32float', 'rg16uint', 'rg16sint', 'rg16float', 'rgba8unorm', 'rgba8unorm-srgb', 'rgba8snorm',
    'rgba8uint', 'rgba8sint', 'bgra8unorm', 'bgra8unorm-srgb', 'rgb9e5ufloat', 'rgb10a2uint', 'rgb10a2unorm', 'rg11b10ufloat',
    'depth24plus', 'depth32float',
  ].map((n) => [n, plain(4)] as [string, TexelBlock]),
  ...['rg16unorm', 'rg16snorm'].map((n) => [n, plain(4, 'texture-formats-tier1')] as [string, TexelBlock]),
  ['depth24plus-stencil8', plain(8)],
  ['depth32float-stencil8', plain(8, 'depth32float-stencil8')],
  ...['rg32uint', 'rg32sint', 'rg32float', 'rgba16uint', 'rgba16sint', 'rgba16float'].map((n) => [n, plain(8)] as [string, TexelBlock]),
  ...['rgba16unorm', 'rgba16snorm'].map((n) => [n, plain(8, 'texture-formats-tier1')] as [string, TexelBlock]),
  ...['rgba32uint', 'rgba32sint', 'rgba32float'].map((n) => [n, plain(16)] as [string, TexelBlock]),
  ...compressed(['bc1-rgba-unorm'], 4, 4, 8, 'texture-compression-bc', true),
  ...compressed(['bc2-rgba-unorm', 'bc3-rgba-unorm', 'bc7-rgba-unorm'], 4, 4, 16, 'texture-compression-bc', true),
  ...compressed(['bc4-r-unorm', 'bc4-r-snorm'], 4, 4, 8, 'texture-compression-bc', false),
  ...compressed(['bc5-rg-unorm', 'bc5-rg-snorm', 'bc6h-rgb-ufloat', 'bc6h-rgb-float'], 4, 4, 16, 'texture-compression-bc', false),
  ...compressed(['etc2-rgb8unorm', 'etc2-rgb8a1unorm'], 4, 4, 8, 'texture-compression-etc2', true),
  ...compressed(['etc2-rgba8unorm'], 4, 4, 16, 'texture-compression-etc2', true),
  ...compressed(['eac-r11unorm', 'eac-r11snorm'], 4, 4, 8, 'texture-compression-etc2', false),
  ...compressed(['eac-rg11unorm', 'eac-rg11snorm'], 4, 4, 16, 'texture-compression-etc2', false),
  ...ASTC_BLOCKS.flatMap((size) => {
    const [width, height] = size.split('x').map(Number);
    return compressed([`astc-${size}-unorm`], width, height, 16, 'texture-compression-astc', true);
  }),
]);

/** The GPUTextureFormat names, for WebIDL's enum check. */
export const TEXTURE_FORMATS: readonly string[] = [...TEXEL_BLOCKS.keys()];

/**
 * Why a device with `features` may not name `format` (the specification's "validate texture format required
 * features", a TypeError at the call), or null when it may. `what` names the argument.
 */
export function formatFeatureProblem(format: string, features: { has(feature: string): boolean }, what: string): string | null {
  const feature = TEXEL_BLOCKS.get(format)?.feature;
  return feature && !features.has(feature) ? `${what}: '${format}' needs the '${feature}' feature, which the device was not created with` : null;
}

/** What a texture's footprint depends on. */
export interface TextureShape {
  format: string;
  dimension: '1d' | '2d' | '3d';
  width: number;
  height: number;
  depthOrArrayLayers: number;
  mipLevelCount: number;
  sampleCount: number;
}

/**
 * The bytes a texture holds: per mip level, its blocks (each dimension halved per level, at least 1,
 * rounded up to whole blocks) × block bytes × layers (or depth, halved per level, for '3d'), all ×
 * sampleCount. Null for a format this table does not know.
 */
export function textureBytes(shape: TextureShape): number | null {
  const block = TEXEL_BLOCKS.get(shape.format);
  if (!block) return null;
  let bytes = 0;
  for (let level = 0; level < shape.mipLevelCount; level++) {
    const width = Math.max(1, Math.floor(shape.width / 2 ** level));
    const height = shape.dimension === '1d' ? 1 : Math.max(1, Math.floor(shape.height / 2 ** level));
    const layers = shape.dimension === '3d' ? Math.max(1, Math.floor(shape.depthOrArrayLayers / 2 ** level)) : shape.depthOrArrayLayers;
    bytes += Math.ceil(width / block.width) * Math.ceil(height / block.height) * layers * block.bytes;
  }
  return bytes * shape.sampleCount;
}
