import { describe, expect, it } from 'vitest';
import { bufferBindingKinds, computeStageNeeds, interStageVariables, stageResources } from '../../../core/executor/wgslLimits.js';

/** The workgroup storage of `main` in `code`. */
const storage = (code: string, constants?: Record<string, number>) => computeStageNeeds(code, 'main', constants)?.workgroupStorageBytes;

describe('computeStageNeeds', () => {
  it('sums the workgroup variables main uses, each rounded up to 16 bytes', () => {
    expect(storage('var<workgroup> a: array<f32, 4095>; var<workgroup> b: f32; @compute @workgroup_size(1) fn main() { a[0] = b; }')).toBe(16400);
    expect(storage('var<workgroup> a: array<vec3f, 1023>; var<workgroup> b: vec3f; @compute @workgroup_size(1) fn main() { a[0] = b; }')).toBe(16384);
  });

  it('follows the WGSL layout rules for vectors, matrices, arrays, structs, atomics and aliases', () => {
    const one = (type: string, prelude = '') => storage(`${prelude} var<workgroup> a: ${type}; @compute @workgroup_size(1) fn main() { _ = a; }`);
    expect(one('array<vec3<f32>, 2>')).toBe(32);
    expect(one('mat3x3f')).toBe(48);
    expect(one('mat2x3<f16>')).toBe(16);
    expect(one('array<mat4x2f, 3>')).toBe(96);
    expect(one('array<atomic<u32>, 5>')).toBe(32);
    expect(one('S', 'struct S { a: f32, b: vec3f, }')).toBe(32);
    expect(one('array<S, 3>', 'struct S { @size(20) a: f32, @align(8) b: u32 }')).toBe(96);
    expect(one('T', 'alias T = array<vec2h, 3>;')).toBe(16);
  });

  it('counts variables reached through calls, not unused ones, and evaluates consts and overrides', () => {
    expect(storage('var<workgroup> a: array<f32, 100>; var<workgroup> b: array<f32, 9000>; fn f() { a[1] = 2; } @compute @workgroup_size(1) fn main() { f(); }')).toBe(400);
    expect(storage('const n = 4u * 8; var<workgroup> a: array<f32, n + 1>; @compute @workgroup_size(1) fn main() { a[0] = 1; }')).toBe(144);
    const withOverride = 'override n: u32 = 16; var<workgroup> a: array<f32, n * 256>; @compute @workgroup_size(1) fn main() { a[0] = 1; }';
    expect(storage(withOverride)).toBe(16384);
    expect(storage(withOverride, { n: 17 })).toBe(17408);
    expect(storage('@id(3) override n: u32; var<workgroup> a: array<f32, n>; @compute @workgroup_size(1) fn main() { a[0] = 1; }', { 3: 8 })).toBe(32);
  });

  it('gives null for what it cannot tell: shadowed names, unknown types and expressions', () => {
    expect(storage('var<workgroup> a: array<f32, 4096>; @compute @workgroup_size(1) fn main() { let a = 1; _ = a; }')).toBeNull();
    expect(storage('var<workgroup> a: array<f32, u32(3.5)>; @compute @workgroup_size(1) fn main() { a[0] = 1; }')).toBeNull();
    expect(storage('override n: u32; var<workgroup> a: array<f32, n>; @compute @workgroup_size(1) fn main() { a[0] = 1; }')).toBeNull();
    expect(computeStageNeeds('@compute @workgroup_size(1) fn a() {} @compute @workgroup_size(1) fn b() {}', undefined)).toBeNull();
  });

  it('reads the workgroup size from literals, consts and overrides', () => {
    expect(computeStageNeeds('const w = 16; @compute @workgroup_size(w, w + 1) fn main() {}', 'main')?.workgroupSize).toEqual([16, 17, 1]);
    expect(computeStageNeeds('override x = 8; @compute @workgroup_size(x, 2, 3) fn main() {}', 'main', { x: 64 })?.workgroupSize).toEqual([64, 2, 3]);
    expect(computeStageNeeds('@compute @workgroup_size(257) fn main() {}', undefined)?.workgroupSize).toEqual([257, 1, 1]);
  });
});

describe('bufferBindingKinds', () => {
  it('names each declared buffer binding uniform or storage', () => {
    const kinds = bufferBindingKinds('@group(0) @binding(1) var<uniform> u: vec4f; @binding(2) @group(1) var<storage, read_write> s: array<u32>;');
    expect(Object.fromEntries(kinds!)).toEqual({ '0:1': 'uniform', '1:2': 'storage' });
  });
});

describe('stageResources', () => {
  const module = `
    @group(0) @binding(0) var t: texture_2d<f32>;
    @group(0) @binding(1) var s: sampler;
    @group(0) @binding(2) var o: texture_storage_2d<r32float, write>;
    @group(0) @binding(3) var<uniform> u: vec4f;
    @group(0) @binding(4) var d: texture_depth_2d;
    fn helper() -> vec4f { return textureSampleLevel(t, s, vec2f(0.0), 0.0); }
    @vertex fn vs() -> @builtin(position) vec4f { return u; }
    @fragment fn fs() -> @location(0) vec4f { textureStore(o, vec2i(0), helper()); return vec4f(textureLoad(d, vec2i(0), 0)); }`;

  it('counts the bindings each entry point uses, through the functions it calls, by kind', () => {
    expect(stageResources(module, 'fs', 'fragment')).toEqual({ uniform: 0, storage: 0, sampledTexture: 2, storageTexture: 1, sampler: 1 });
    expect(stageResources(module, 'vs', 'vertex')).toEqual({ uniform: 1, storage: 0, sampledTexture: 0, storageTexture: 0, sampler: 0 });
    expect(stageResources(module, 'fs', 'vertex')).toBeNull();
  });
});

describe('interStageVariables', () => {
  const module = `
    struct VOut { @builtin(position) p: vec4f, @location(0) a: vec4f, @location(1) b: f32, @location(3) c: vec2f }
    struct FIn { @builtin(front_facing) f: bool, @location(0) a: vec4f, @builtin(position) p: vec4f }
    @vertex fn vs() -> VOut { var o: VOut; return o; }
    @vertex fn direct() -> @builtin(position) vec4f { return vec4f(0.0); }
    @fragment fn fs(i: FIn, @location(1) b: f32, @builtin(sample_index) s: u32) -> @location(0) vec4f { return i.a; }`;

  it('counts a vertex stage\'s location outputs and a fragment stage\'s location inputs and counted builtins', () => {
    expect(interStageVariables(module, 'vs', 'vertex')).toBe(3);
    expect(interStageVariables(module, 'direct', 'vertex')).toBe(0);
    // a, b, front_facing and sample_index; position does not count.
    expect(interStageVariables(module, 'fs', 'fragment')).toBe(4);
  });
});
