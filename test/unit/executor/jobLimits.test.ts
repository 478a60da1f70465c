import { describe, expect, it } from 'vitest';
import {
  bindGroupLayoutLimitError, bindingSizeLimitError, dynamicOffsetAlignmentError, noteDynamicAlignments, noteLayoutEntries,
  noteLayoutOfPipeline, notePipeline, noteShaderModule, pipelineLayoutLimitError, type LimitPair,
} from '../../../core/executor/jobLimits.js';

/** A job with WebGPU's defaults on a shared device with an adapter's finer alignment and more storage buffers. */
const limits: LimitPair = (key) => ({
  minStorageBufferOffsetAlignment: { job: 256, device: 32 },
  minUniformBufferOffsetAlignment: { job: 256, device: 256 },
  maxStorageBuffersPerShaderStage: { job: 8, device: 12 },
  maxStorageBufferBindingSize: { job: 128, device: 1024 },
  maxDynamicStorageBuffersPerPipelineLayout: { job: 4, device: 8 },
}[key] ?? { job: 100, device: 100 });

const layout = (entries: Parameters<typeof noteLayoutEntries>[1]) => {
  const obj = {} as GPUBindGroupLayout;
  noteLayoutEntries(obj, entries);
  return obj;
};

describe('job limits past the shared device', () => {
  it('refuses an offset the job\'s alignment does not allow, though the shared device\'s does', () => {
    const storage = layout([{ binding: 0, visibility: 4, buffer: { type: 'storage' } }, { binding: 1, visibility: 4, buffer: {} }]);
    expect(bindingSizeLimitError(limits, storage, 0, 32, 16)).toMatch(/minStorageBufferOffsetAlignment 256/);
    expect(bindingSizeLimitError(limits, storage, 0, 512, 16)).toBeNull();
    // Uniform alignment is the same on both: Dawn's own check applies.
    expect(bindingSizeLimitError(limits, storage, 1, 32, 16)).toBeNull();
    expect(bindingSizeLimitError(limits, storage, 0, 0, 132)).toMatch(/maxStorageBufferBindingSize 128/);
  });

  it('refuses a dynamic offset the job\'s alignment does not allow', () => {
    const dynamic = layout([{ binding: 0, visibility: 4, buffer: { type: 'uniform', hasDynamicOffset: true } as { type: string } }, { binding: 3, visibility: 4, buffer: { type: 'storage' } }]);
    const group = {} as GPUBindGroup;
    noteDynamicAlignments(limits, group, dynamic, [0, 3]);
    expect(dynamicOffsetAlignmentError(group, [32, 512])).toBeNull();
    expect(dynamicOffsetAlignmentError(group, [32, 288])).toMatch(/dynamic offset 288 .* alignment 256/);
    const aligned = {} as GPUBindGroup;
    noteDynamicAlignments(limits, aligned, dynamic, [0]);
    expect(dynamicOffsetAlignmentError(aligned, [32])).toBeNull();
  });

  it('counts storage buffers per stage in a layout and across a pipeline layout', () => {
    const entries = (n: number, visibility = 4) => Array.from({ length: n }, (_, i) => ({ binding: i, visibility, buffer: { type: 'read-only-storage' } }));
    expect(bindGroupLayoutLimitError(limits, layout(entries(9)))).toMatch(/9 storage buffers visible to the compute stage/);
    expect(bindGroupLayoutLimitError(limits, layout(entries(8)))).toBeNull();
    expect(pipelineLayoutLimitError(limits, [layout(entries(5)), null, layout(entries(4))])).toMatch(/9 storage buffers/);
    expect(pipelineLayoutLimitError(limits, [layout(entries(5)), layout(entries(4, 2))])).toBeNull();
    // Dynamic storage buffers count per pipeline layout, whatever the stage.
    const dynamic = (n: number) => layout(Array.from({ length: n }, (_, i) => ({ binding: i, visibility: 4, buffer: { type: 'storage', hasDynamicOffset: true } })));
    expect(bindGroupLayoutLimitError(limits, dynamic(5))).toMatch(/5 storage buffers with dynamic offsets/);
    expect(pipelineLayoutLimitError(limits, [dynamic(2), dynamic(2)])).toBeNull();
    expect(pipelineLayoutLimitError(limits, [dynamic(3), dynamic(2)])).toMatch(/maxDynamicStorageBuffersPerPipelineLayout 4/);
    // A layout it knows nothing of (none recorded) is not refused.
    expect(pipelineLayoutLimitError(limits, [layout(entries(5)), {} as GPUBindGroupLayout])).toBeNull();
  });

  it('knows every auto layout of a pipeline by its WGSL, read once per module and shared by its layouts', () => {
    const module = {} as GPUShaderModule;
    noteShaderModule(module, '@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n@group(1) @binding(2) var<uniform> u: vec4f;');
    const pipelines = [{}, {}] as GPUComputePipeline[];
    for (const pipeline of pipelines) notePipeline(pipeline, module);
    // TF.js asks for group 0 before every dispatch: each of its layouts carries the bindings.
    const layouts = [...pipelines, pipelines[0]].map((pipeline) => {
      const obj = {} as GPUBindGroupLayout;
      noteLayoutOfPipeline(obj, pipeline, 0);
      return obj;
    });
    for (const obj of layouts) expect(bindingSizeLimitError(limits, obj, 0, 0, 132)).toMatch(/binding 0 is 132 bytes.*maxStorageBufferBindingSize 128/);
    const group1 = {} as GPUBindGroupLayout;
    noteLayoutOfPipeline(group1, pipelines[1], 1);
    expect(bindingSizeLimitError(limits, group1, 0, 0, 132)).toBeNull();
    const empty = {} as GPUBindGroupLayout;
    noteLayoutOfPipeline(empty, pipelines[0], 3);
    expect(bindGroupLayoutLimitError(limits, empty)).toBeNull();
  });
});
