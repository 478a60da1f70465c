// The pool of compiled pipelines, on a real (SwiftShader) device: an 'auto' pipeline is handed out only for the
// same key (source, entry point, constants; for render every state), to one taker at a time; explicit-layout ones
// are held, never handed out; the oldest go past the capacity.
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { ErrorScopes } from '../../../core/executor/errorScopes.js';
import { noteShaderModule } from '../../../core/executor/jobLimits.js';
import { computePipelineKey, PipelinePool, renderPipelineKey } from '../../../core/executor/pipelinePool.js';

const file = useFileDevice('pipeline pool tests');

const WGSL = `override scale: f32 = 1.0;
override bias: f32 = 0.0;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(1) fn main() { data[0] = data[0] * scale + bias; }
@compute @workgroup_size(1) fn other() { data[1] = 2.0; }`;

/** A new module of `code` (each its own object, as each job's would be), its WGSL noted as replay notes it. */
function moduleOf(code = WGSL): GPUShaderModule {
  const module = file.device.createShaderModule({ code });
  noteShaderModule(module, code);
  return module;
}

/** An 'auto' compute pipeline of a new module, recorded in `pool` under its key. */
function made(pool: PipelinePool, entryPoint = 'main', constants?: Record<string, number>): GPUComputePipeline {
  const module = moduleOf();
  const pipeline = file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint, constants } });
  pool.made(pipeline, computePipelineKey(module, entryPoint, constants));
  return pipeline;
}

describe('PipelinePool', () => {
  it('hands a retained pipeline to the next module of the same source, once', () => {
    const pool = new PipelinePool();
    const pipeline = made(pool);
    const key = computePipelineKey(moduleOf(), 'main', undefined)!;
    expect(pool.take(key)).toBeNull();
    pool.retain(pipeline);
    expect(pool.size).toBe(1);
    expect(pool.take(key)).toBe(pipeline);
    expect(pool.take(key)).toBeNull();
    expect(pool.reused).toBe(1);
    expect(pool.size).toBe(0);
  });

  it('keys entry points, constants and sources apart, and constants in any order alike', () => {
    const later = moduleOf();
    expect(computePipelineKey(later, 'main', { scale: 2, bias: 1 })).toBe(computePipelineKey(moduleOf(), 'main', { bias: 1, scale: 2 }));
    const keys = [
      computePipelineKey(later, 'main', undefined), computePipelineKey(later, 'other', undefined),
      computePipelineKey(later, 'main', { scale: 2, bias: 1 }), computePipelineKey(later, 'main', { scale: 2, bias: 2 }),
      computePipelineKey(moduleOf(`${WGSL}\n// another module`), 'main', undefined),
    ];
    expect(new Set(keys).size).toBe(keys.length);
    // A module whose WGSL is not known gives no key: nothing is handed out for it.
    expect(computePipelineKey(file.device.createShaderModule({ code: WGSL }), 'main', undefined)).toBeNull();
  });

  it('holds explicit-layout pipelines and never hands them out, nor pipelines it was never told were made', () => {
    const pool = new PipelinePool();
    const module = moduleOf();
    const layout = file.device.createPipelineLayout({
      bindGroupLayouts: [file.device.createBindGroupLayout({ entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }] })],
    });
    const explicit = file.device.createComputePipeline({ layout, compute: { module, entryPoint: 'main' } });
    pool.made(explicit, null);
    pool.retain(explicit);
    const unknown = file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    pool.retain(unknown);
    expect(pool.size).toBe(1);
    expect(pool.take(computePipelineKey(module, 'main', undefined)!)).toBeNull();
  });

  it('keeps two equal pipelines as two, and lets the oldest go past its capacity', () => {
    const pool = new PipelinePool(2);
    const first = made(pool);
    const second = made(pool);
    const third = made(pool, 'other');
    pool.retain(first);
    pool.retain(second);
    pool.retain(third);
    expect(pool.size).toBe(2);
    const module = moduleOf();
    // The first went; the second and the third are there, each handed out once.
    expect(pool.take(computePipelineKey(module, 'main', undefined)!)).toBe(second);
    expect(pool.take(computePipelineKey(module, 'main', undefined)!)).toBeNull();
    expect(pool.take(computePipelineKey(module, 'other', undefined)!)).toBe(third);
  });

  it('records a pipeline it creates only when Dawn raised no error making it', () => {
    const pool = new PipelinePool();
    // A job's segment is open, as during replay: the device's errors are counted and go to it.
    const errors: unknown[] = [];
    const scopes = new ErrorScopes(file.device, (error) => errors.push(error));
    scopes.openSegment();
    const good = moduleOf();
    const tooWide = moduleOf('@compute @workgroup_size(257) fn main() { }');
    let valid: GPUComputePipeline;
    let invalid: GPUComputePipeline;
    try {
      valid = pool.created(file.device, computePipelineKey(good, 'main', undefined), () =>
        file.device.createComputePipeline({ layout: 'auto', compute: { module: good, entryPoint: 'main' } }));
      invalid = pool.created(file.device, computePipelineKey(tooWide, 'main', undefined), () =>
        file.device.createComputePipeline({ layout: 'auto', compute: { module: tooWide, entryPoint: 'main' } }));
    } finally {
      scopes.closeSegment();
    }
    // The segment's errors reach the job as it closes: the one pipeline past the device's limits.
    expect(errors).toHaveLength(1);
    pool.retainEntry({ kind: 'computePipeline', obj: valid });
    pool.retainEntry({ kind: 'computePipeline', obj: invalid });
    pool.retainEntry({ kind: 'shaderModule', obj: good });
    expect(pool.size).toBe(1);
    expect(pool.take(computePipelineKey(moduleOf(), 'main', undefined)!)).toBe(valid);
  });

  it('retains nothing at capacity 0, and a pipeline once however often it is returned', () => {
    const none = new PipelinePool(0);
    none.retain(made(none));
    expect(none.size).toBe(0);
    const pool = new PipelinePool();
    const pipeline = made(pool);
    pool.retain(pipeline);
    pool.retain(pipeline);
    expect(pool.size).toBe(1);
  });
});

describe('renderPipelineKey', () => {
  const SHADER = `@vertex fn vs(@builtin(vertex_index) i: u32) -> @builtin(position) vec4f { return vec4f(f32(i), 0, 0, 1); }
@fragment fn fs() -> @location(0) vec4f { return vec4f(1); }`;
  /** A render descriptor as a job sends it: module `id` as a reference. */
  const described = (id: number, overrides: Record<string, unknown> = {}) => ({
    layout: 'auto',
    vertex: { module: { $ref: id, $kind: 'shaderModule' }, entryPoint: 'vs', constants: { a: 1, b: 2 } },
    fragment: { module: { $ref: id, $kind: 'shaderModule' }, entryPoint: 'fs', targets: [{ format: 'rgba8unorm' }] },
    primitive: { topology: 'triangle-list' },
    ...overrides,
  });

  it('is the same for the same WGSL under other ids, labels and constant orders, and differs with any state', () => {
    const modules = new Map([[1, moduleOf(SHADER)], [7, moduleOf(SHADER)], [9, moduleOf(`${SHADER}\n// another`)]]);
    const table = (id: number) => modules.get(id)!;
    const key = renderPipelineKey(described(1), table);
    expect(key).not.toBeNull();
    const reordered = described(7, { label: 'mine' });
    (reordered.vertex as { constants: object }).constants = { b: 2, a: 1 };
    expect(renderPipelineKey(reordered, table)).toBe(key);
    const others = [
      described(9), described(1, { primitive: { topology: 'point-list' } }),
      described(1, { fragment: { module: { $ref: 1, $kind: 'shaderModule' }, entryPoint: 'fs', targets: [{ format: 'bgra8unorm' }] } }),
      described(1, { multisample: { count: 4 } }),
    ];
    for (const other of others) expect(renderPipelineKey(other, table)).not.toBe(key);
  });

  it('is null for an explicit layout, or a module whose WGSL is unknown', () => {
    const known = moduleOf(SHADER);
    const unknown = file.device.createShaderModule({ code: SHADER });
    expect(renderPipelineKey(described(1, { layout: { $ref: 3, $kind: 'pipelineLayout' } }), () => known)).toBeNull();
    expect(renderPipelineKey(described(1), () => unknown)).toBeNull();
  });
});
