/** Render descriptors checked as WebIDL converts them: required members, enums, holes, colors, formats' features. */
import { describe, expect, it } from 'vitest';
import { renderDescriptorProblem } from '../../../core/protocol/renderDescriptors.js';

const MODULE = { $ref: 1, $kind: 'shaderModule' };
const NO_FEATURES = { has: () => false };

describe('renderDescriptorProblem', () => {
  it('accepts a full pipeline, holes in sequences that allow them, and a color as four numbers', () => {
    expect(renderDescriptorProblem('createRenderPipeline', {
      layout: 'auto',
      vertex: { module: MODULE, buffers: [null, { arrayStride: 8, stepMode: 'instance', attributes: [{ format: 'unorm8x4-bgra', offset: 0, shaderLocation: 0 }] }] },
      primitive: { topology: 'line-strip', stripIndexFormat: 'uint32', cullMode: 'back' },
      depthStencil: { format: 'depth24plus-stencil8', depthCompare: 'greater', stencilBack: { failOp: 'decrement-wrap' } },
      fragment: { module: MODULE, targets: [null, { format: 'rgba8unorm', blend: { color: { srcFactor: 'src1-alpha' }, alpha: {} } }] },
    }, NO_FEATURES)).toBeNull();
    expect(renderDescriptorProblem('beginRenderPass', { colorAttachments: [{ view: {}, loadOp: 'clear', storeOp: 'discard', clearValue: [0, 0, 0, 1] }, null] })).toBeNull();
    expect(renderDescriptorProblem('createRenderBundleEncoder', { colorFormats: [null] })).toBeNull();
  });

  it('names the first missing required member or value outside its enum, with its path', () => {
    expect(renderDescriptorProblem('createRenderPipeline', { layout: 'auto', vertex: { module: MODULE }, fragment: { module: MODULE, targets: [{ format: 'rgba8unorm', blend: { alpha: {} } }] } }))
      .toBe("createRenderPipeline.fragment.targets[0].blend: the dictionary has no 'color'");
    expect(renderDescriptorProblem('createRenderPipeline', { vertex: { module: MODULE } })).toBe("createRenderPipeline: the dictionary has no 'layout'");
    expect(renderDescriptorProblem('createRenderPipeline', { layout: 'auto', vertex: { module: MODULE, buffers: [{ arrayStride: 4, attributes: [{ format: 'float64', offset: 0, shaderLocation: 0 }] }] } }))
      .toBe("createRenderPipeline.vertex.buffers[0].attributes[0].format: 'float64' is not a valid value");
    // Every vertex format dawn.node takes is taken (snorm10-10-10-2 was a TypeError through the service only).
    for (const format of ['unorm10-10-10-2', 'snorm10-10-10-2', 'unorm8x4-bgra']) {
      expect(renderDescriptorProblem('createRenderPipeline', { layout: 'auto', vertex: { module: MODULE, buffers: [{ arrayStride: 4, attributes: [{ format, offset: 0, shaderLocation: 0 }] }] } })).toBeNull();
    }
    expect(renderDescriptorProblem('beginRenderPass', { colorAttachments: [{ view: {}, loadOp: 'clear', storeOp: 'store', clearValue: { r: 0, g: 0, b: 0 } }] }))
      .toBe("beginRenderPass.colorAttachments[0].clearValue: the GPUColor has no 'a'");
    expect(renderDescriptorProblem('beginRenderPass', { colorAttachments: {} })).toBe('beginRenderPass.colorAttachments: not a sequence');
    expect(renderDescriptorProblem('createRenderBundleEncoder', 7)).toBe('createRenderBundleEncoder: not a dictionary');
  });

  it('refuses a texture format whose feature the device lacks, only when features are given', () => {
    const bundle = { colorFormats: [], depthStencilFormat: 'depth32float-stencil8' };
    expect(renderDescriptorProblem('createRenderBundleEncoder', bundle, NO_FEATURES)).toMatch(/depthStencilFormat: 'depth32float-stencil8' needs the 'depth32float-stencil8' feature/);
    expect(renderDescriptorProblem('createRenderBundleEncoder', bundle, new Set(['depth32float-stencil8']))).toBeNull();
    expect(renderDescriptorProblem('createRenderBundleEncoder', bundle)).toBeNull();
  });
});
