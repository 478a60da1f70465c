import { describe, expect, it } from 'vitest';
import { filterableTextureBindings } from '../../../core/executor/wgslSampledTextures.js';

describe('filterableTextureBindings', () => {
  const header = `@group(0) @binding(0) var t: texture_2d<f32>; @group(1) @binding(3) var u: texture_2d_array<f32>;
    @group(0) @binding(1) var s: sampler; @group(0) @binding(2) var c: sampler_comparison;
    @group(0) @binding(4) var d: texture_depth_2d; @group(0) @binding(5) var i: texture_2d<u32>;
    @group(2) @binding(0) var w: texture_2d<f32>;
    fn helper() -> vec4f { return textureSampleLevel(u, s, vec2f(0), 1, 0); }
    fn uncalled() -> vec4f { return textureSample(t, s, vec2f(0)); }
    fn viaParam(tt: texture_2d<f32>, ss: sampler) -> vec4f { return textureSampleLevel(tt, ss, vec2f(0), 0); }
    fn viaTexture(tt: texture_2d<f32>) -> vec4f { return textureSampleLevel(tt, s, vec2f(0), 0); }
    fn deeper(a: texture_2d<f32>, b: sampler) -> vec4f { return viaParam(a, b); }
    fn loads(tt: texture_2d<f32>, ss: sampler) -> vec4f { _ = ss; return textureLoad(tt, vec2i(0), 0); }
    fn shadows(t: texture_2d<f32>) -> vec4f { return textureSampleLevel(t, s, vec2f(0), 0); }`;
  const stage = (body: string) => `${header} @fragment fn main() -> @location(0) vec4f { ${body} }`;
  const sampled = (body: string) => filterableTextureBindings(stage(body), undefined, 'fragment');

  it('lists the f32 textures the entry point samples with a sampler, itself or in a function it calls', () => {
    expect(sampled('return textureSample(t, s, vec2f(0));')).toEqual(new Set(['0:0']));
    expect(filterableTextureBindings(stage('return textureGather(1, t, s, vec2f(0)) + helper();'), 'main', 'fragment')).toEqual(new Set(['0:0', '1:3']));
  });

  it('follows textures and samplers through function parameters to what each call passes, as Tint does', () => {
    expect(sampled('return viaParam(t, s);')).toEqual(new Set(['0:0']));
    expect(sampled('return viaTexture(w);')).toEqual(new Set(['2:0']));
    expect(sampled('return deeper(w, s) + deeper(t, s);')).toEqual(new Set(['0:0', '2:0']));
    // A parameter named as a module-scope texture stands for what the call passes, not for that texture.
    expect(sampled('return shadows(w);')).toEqual(new Set(['2:0']));
  });

  it('leaves out loads, comparisons, uncalled functions and other texture types, through parameters too', () => {
    const body = 'let a = textureLoad(t, vec2i(0), 0); let b = textureSampleCompare(d, c, vec2f(0), 0.5); let e = textureLoad(i, vec2i(0), 0); return a + loads(w, s) + vec4f(b);';
    expect(sampled(body)).toEqual(new Set());
  });

  it('says nothing when it cannot tell: a local name shadowing a texture, a binding that is not a literal, no such entry point', () => {
    expect(sampled('let t = 1; return textureSample(u, s, vec2f(0));')).toBeNull();
    expect(filterableTextureBindings('override g = 0; @group(g) @binding(0) var t: texture_2d<f32>; @compute @workgroup_size(1) fn main() {}', undefined, 'compute')).toBeNull();
    expect(filterableTextureBindings(stage('return vec4f();'), 'other', 'fragment')).toBeNull();
  });
});
