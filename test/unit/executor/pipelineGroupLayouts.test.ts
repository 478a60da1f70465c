// A pipeline's bind group layouts asked for again: the same layout each time, working in bind groups, while
// an index the pipeline refuses raises its error on every call, as on a local device.
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { ErrorScopes, deviceErrorCount } from '../../../core/executor/errorScopes.js';
import { groupLayoutOf } from '../../../core/executor/pipelineGroupLayouts.js';
import type { GpuErrorJson } from '../../../core/protocol/commands.js';

const file = useFileDevice('pipeline group layouts tests');

const WGSL = `@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(1) fn main() { data[0] = data[0] + 1.0; }`;

function pipeline(): GPUComputePipeline {
  const module = file.device.createShaderModule({ code: WGSL });
  return file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
}

/** Runs `work` inside a job's segment; the errors it raised. */
function inSegment(work: () => void): GpuErrorJson[] {
  const uncaptured: GpuErrorJson[] = [];
  const scopes = new ErrorScopes(file.device, (error) => uncaptured.push(error));
  scopes.openSegment();
  try {
    work();
  } finally {
    scopes.closeSegment();
  }
  return uncaptured;
}

describe('groupLayoutOf', () => {
  it('answers a repeat with the first layout, which makes bind groups that run', async () => {
    const compute = pipeline();
    let first: GPUBindGroupLayout | undefined;
    let again: GPUBindGroupLayout | undefined;
    const buffer = file.device.createBuffer({ size: 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    const readback = file.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const errors = inSegment(() => {
      first = groupLayoutOf(file.device, compute, 0);
      again = groupLayoutOf(file.device, compute, 0);
      const encoder = file.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(compute);
      for (const layout of [first, again]) {
        pass.setBindGroup(0, file.device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer } }] }));
        pass.dispatchWorkgroups(1);
      }
      pass.end();
      encoder.copyBufferToBuffer(buffer, 0, readback, 0, 4);
      file.device.queue.submit([encoder.finish()]);
    });
    expect(errors).toEqual([]);
    expect(again).toBe(first);
    await readback.mapAsync(GPUMapMode.READ);
    expect(new Float32Array(readback.getMappedRange())[0]).toBe(2);
    readback.unmap();
  });

  it('raises an index past the device\'s bind groups on every call, and keeps no layout for it', () => {
    const compute = pipeline();
    const past = file.device.limits.maxBindGroups;
    const before = deviceErrorCount(file.device);
    const errors = inSegment(() => {
      groupLayoutOf(file.device, compute, past);
      groupLayoutOf(file.device, compute, past);
    });
    expect(errors.map((e) => e.type)).toEqual(['validation', 'validation']);
    expect(deviceErrorCount(file.device)).toBe(before + 2);
  });
});
