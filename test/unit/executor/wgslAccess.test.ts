import { describe, expect, it } from 'vitest';
import { moduleAccess, onlyAssigned, stripComments } from '../../../core/executor/wgslAccess.js';

const access = (code: string) => {
  const result = moduleAccess(code);
  return result && Object.fromEntries(result);
};

describe('moduleAccess', () => {
  it('reads uniforms and read-only storage, in either attribute order', () => {
    expect(access(`
      @group(0) @binding(0) var<storage, read> a: array<f32>;
      @binding(1) @group(0) var<storage> b: array<f32>;
      @group(1) @binding(2) var<uniform> u: vec4f;
      @compute @workgroup_size(1) fn main() {}`)).toEqual({ '0:0': 'read', '0:1': 'read', '1:2': 'read' });
  });

  it('proves a read_write binding write-only only when every use is an assignment target', () => {
    expect(access(`
      @group(0) @binding(0) var<storage, read_write> out: array<f32>;
      @group(0) @binding(1) var<storage, read_write> acc: array<f32>;
      @group(0) @binding(2) var<storage, read_write> s: array<vec4f>;
      fn put(i: u32, v: f32) { out[i] = v; s[i].x = v; }
      @compute @workgroup_size(1) fn main(@builtin(global_invocation_id) id: vec3u) {
        if (id.x >= arrayLength(&out)) { return; }
        put(id.x, 1.0);
        acc[id.x] += 1.0;
      }`)).toEqual({ '0:0': 'write', '0:1': 'read', '0:2': 'write' });
  });

  it('counts as reads: comparisons, reads on the right, pointers, increments, an index that reads', () => {
    for (const body of ['if (o[0] == 1.0) {}', 'let x = o[1];', 'let p = &o;', 'o[0]++;', 'o[u32(o[1])] = 2.0;', 'o[0] = o[0] + 1.0;', 'f(&o[0]);']) {
      const code = `@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n@compute @workgroup_size(1) fn main() { ${body} }`;
      expect(access(code), body).toEqual({ '0:0': 'read' });
    }
  });

  it('ignores comments and other names that only contain the binding name', () => {
    expect(access(`
      @group(0) @binding(0) var<storage, read_write> out: array<f32>;
      // let x = out[0];
      /* out[1] /* nested */ + out[2] */
      @compute @workgroup_size(1) fn main() { let output = 1.0; let y = v.out; out[0] = output; }`)).toEqual({ '0:0': 'write' });
  });

  it('trusts nothing when a binding is not a plain number', () => {
    expect(access('const B = 1u;\n@group(0) @binding(B) var<storage, read> a: array<f32>;\n@compute @workgroup_size(1) fn main() {}')).toBeNull();
    expect(access('@group(0) @binding(0) var<storage, read> a: array<f32>;\n@group(0)\n@binding(1)\nvar<storage,read_write>b:array<f32>;\n@compute @workgroup_size(1) fn main() { b[0] = 1.0; }'))
      .toEqual({ '0:0': 'read', '0:1': 'write' });
  });

  it('strips nested block comments and line comments', () => {
    expect(stripComments('a /* b /* c */ d */ e // f\ng').replace(/\s+/g, ' ')).toBe('a e g');
    expect(onlyAssigned('var<storage, read_write> x: f32; fn m() { x = 1.0; }', 'x', 25)).toBe(true);
  });
});
