// The pool of compiled compute pipelines, on a real (SwiftShader) device: an 'auto' pipeline is handed out only
// for the same source, entry point and constants, to one taker at a time; explicit-layout ones are held, never
// handed out; the oldest go past the capacity.
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { PipelinePool, type AutoPipelineSource } from '../../../core/executor/pipelinePool.js';

const file = useFileDevice('pipeline pool tests');

const WGSL = `override scale: f32 = 1.0;
override bias: f32 = 0.0;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(1) fn main() { data[0] = data[0] * scale + bias; }
@compute @workgroup_size(1) fn other() { data[1] = 2.0; }`;

function source(overrides: Partial<AutoPipelineSource> = {}): AutoPipelineSource {
  return { code: WGSL, entryPoint: 'main', constants: undefined, ...overrides };
}

/** A new module of WGSL (each its own object, as each job's would be) and an 'auto' pipeline of it, recorded in `pool`. */
function made(pool: PipelinePool, of: AutoPipelineSource = source()): { module: GPUShaderModule; pipeline: GPUComputePipeline } {
  const module = file.device.createShaderModule({ code: of.code });
  const pipeline = file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: of.entryPoint, constants: of.constants } });
  pool.made(pipeline, module, of);
  return { module, pipeline };
}

describe('PipelinePool', () => {
  it('hands a retained pipeline to the next module of the same source, once', () => {
    const pool = new PipelinePool();
    const { pipeline } = made(pool);
    const later = file.device.createShaderModule({ code: WGSL });
    expect(pool.take(later, source())).toBeNull();
    pool.retain(pipeline);
    expect(pool.size).toBe(1);
    expect(pool.take(later, source())).toBe(pipeline);
    expect(pool.take(later, source())).toBeNull();
    expect(pool.reused).toBe(1);
    expect(pool.size).toBe(0);
  });

  it('tells entry points and constants apart, and constants in any order alike', () => {
    const pool = new PipelinePool();
    const constants = { scale: 2, bias: 1 };
    const { pipeline } = made(pool, source({ constants }));
    pool.retain(pipeline);
    const later = file.device.createShaderModule({ code: WGSL });
    expect(pool.take(later, source())).toBeNull();
    expect(pool.take(later, source({ entryPoint: 'other' }))).toBeNull();
    expect(pool.take(later, source({ constants: { scale: 2, bias: 2 } }))).toBeNull();
    const another = `${WGSL}\n// another module`;
    expect(pool.take(file.device.createShaderModule({ code: another }), source({ code: another, constants }))).toBeNull();
    expect(pool.take(later, source({ constants: { bias: 1, scale: 2 } }))).toBe(pipeline);
  });

  it('holds explicit-layout pipelines and never hands them out, nor pipelines it was never told were made', () => {
    const pool = new PipelinePool();
    const module = file.device.createShaderModule({ code: WGSL });
    const layout = file.device.createPipelineLayout({
      bindGroupLayouts: [file.device.createBindGroupLayout({ entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }] })],
    });
    const explicit = file.device.createComputePipeline({ layout, compute: { module, entryPoint: 'main' } });
    pool.made(explicit, module, null);
    pool.retain(explicit);
    const unknown = file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    pool.retain(unknown);
    expect(pool.size).toBe(1);
    expect(pool.take(module, source())).toBeNull();
  });

  it('keeps two equal pipelines as two, and lets the oldest go past its capacity', () => {
    const pool = new PipelinePool(2);
    const first = made(pool).pipeline;
    const second = made(pool).pipeline;
    const third = made(pool, source({ entryPoint: 'other' })).pipeline;
    pool.retain(first);
    pool.retain(second);
    pool.retain(third);
    expect(pool.size).toBe(2);
    const module = file.device.createShaderModule({ code: WGSL });
    // The first went; the second and the third are there, each handed out once.
    expect(pool.take(module, source())).toBe(second);
    expect(pool.take(module, source())).toBeNull();
    expect(pool.take(module, source({ entryPoint: 'other' }))).toBe(third);
  });

  it('retains nothing at capacity 0, and a pipeline once however often it is returned', () => {
    const none = new PipelinePool(0);
    none.retain(made(none).pipeline);
    expect(none.size).toBe(0);
    const pool = new PipelinePool();
    const { pipeline } = made(pool);
    pool.retain(pipeline);
    pool.retain(pipeline);
    expect(pool.size).toBe(1);
  });
});
