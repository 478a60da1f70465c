/**
 * Replay of render: render pipelines (sync and async), render passes into the
 * job's textures, render bundles, vertex and index buffers, draws (direct and
 * indirect), occlusion queries (commandTable.ts, opcodes 49 and up). Dawn
 * validates on the shared device and its errors reach the job's error scopes;
 * on top of it, as for compute: ids resolve in the job's table only (the
 * objects a descriptor names too, core/protocol/objectRefs.ts), the job's
 * features where the shared device has more ('float32-blendable'), a pooled buffer
 * is bound and bounded with the job's size of it, and the buffers a pass or
 * bundle uses are noted for submit's checks and paging's pins.
 */
import type { CommandOf } from '../protocol/commands.js';
import { isObjectRef, MAX_DESCRIPTOR_DEPTH } from '../protocol/objectRefs.js';
import { renderDescriptorProblem, type RenderDescriptorKind } from '../protocol/renderDescriptors.js';
import { autoRenderLayoutError, colorBytesPerSampleError, dynamicOffsetAlignmentError, interStageLimitError, noteAutoRenderPipeline, type RenderStage } from './jobLimits.js';
import { noteAutoLayout } from './autoLayoutTextures.js';
import { pipelinePoolOf, renderPipelineKey } from './pipelinePool.js';
import { ReplayError, type EncoderState, type EntryKind } from './objects.js';
import type { ReplayContext } from './replay.js';
import type { ReplayHelpers } from './textures.js';

type RenderOp = 'createRenderPipeline' | 'renderPipelineBindGroupLayout' | 'beginRenderPass' | 'createRenderBundleEncoder' | 'finishRenderBundle'
  | 'renderSetPipeline' | 'renderSetBindGroup' | 'setVertexBuffer' | 'setIndexBuffer' | 'draw' | 'drawIndexed' | 'drawIndirect'
  | 'setPassState' | 'occlusionQuery' | 'executeBundles' | 'endRenderPass' | 'renderSetImmediates';

/** The objects these commands create, so a failed creation leaves an invalid entry of the right kind. */
export const RENDER_CREATES: Partial<Record<RenderOp, EntryKind>> = {
  createRenderPipeline: 'renderPipeline', renderPipelineBindGroupLayout: 'bindGroupLayout', beginRenderPass: 'renderPass',
  createRenderBundleEncoder: 'renderBundleEncoder', finishRenderBundle: 'renderBundle',
};

/** The commands recorded into an encoder, pass or bundle encoder: their failures surface at its finish(). */
export const RENDER_ENCODER_OPS: Partial<Record<RenderOp, 'encoder' | 'pass'>> = {
  beginRenderPass: 'encoder', renderSetPipeline: 'pass', renderSetBindGroup: 'pass', setVertexBuffer: 'pass', setIndexBuffer: 'pass',
  draw: 'pass', drawIndexed: 'pass', drawIndirect: 'pass', setPassState: 'pass', occlusionQuery: 'pass', executeBundles: 'pass', endRenderPass: 'pass',
  renderSetImmediates: 'pass',
};

/** A descriptor with each `{$ref, $kind}` replaced by the job's object (a ReplayError for one it does not have). */
function resolveRefs(ctx: ReplayContext, value: unknown, depth = 0): unknown {
  if (depth > MAX_DESCRIPTOR_DEPTH) throw new ReplayError('descriptor nests too deep');
  if (value === null || typeof value !== 'object') return value;
  if (isObjectRef(value)) {
    const entry = ctx.table.get(value.$ref, value.$kind);
    return entry.obj;
  }
  if (Array.isArray(value)) return value.map((item) => resolveRefs(ctx, item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = resolveRefs(ctx, item, depth + 1);
  return out;
}

/**
 * A ReplayError unless `descriptor` is a `kind` descriptor as WebIDL converts it, naming only formats the job's
 * device may use. The job side threw a TypeError for these already; this keeps any other client's from the shared
 * device, whose node binding aborts the whole service on some (a GPUBlendState without `color`).
 */
function checkDescriptor(ctx: ReplayContext, kind: RenderDescriptorKind, descriptor: unknown): void {
  const problem = renderDescriptorProblem(kind, descriptor, ctx.table.device?.features);
  if (problem) throw new ReplayError(problem);
}

/** What a render command records into: a render pass (its command encoder's state) or a render bundle encoder (its own). */
function recorder(ctx: ReplayContext, id: number): { obj: GPURenderPassEncoder | GPURenderBundleEncoder; state: EncoderState } {
  const entry = ctx.table.peek(id);
  if (entry?.kind === 'renderPass') return { obj: ctx.table.get(id, 'renderPass').obj, state: entry.encoder };
  if (entry?.kind === 'renderBundleEncoder') return { obj: ctx.table.get(id, 'renderBundleEncoder').obj, state: entry };
  // The table's own message (missing, invalid, another device's).
  ctx.table.get(id, 'renderPass');
  throw new ReplayError(`id ${id} is neither a render pass nor a render bundle encoder`);
}

/** The formats of a render pass descriptor's color attachments, in order (null for a hole or one that cannot be told). */
function attachmentFormats(ctx: ReplayContext, descriptor: Record<string, unknown>): (string | null)[] {
  const attachments = descriptor.colorAttachments;
  if (!Array.isArray(attachments)) return [];
  return attachments.map((attachment: { view?: unknown } | null) => {
    const view = attachment?.view;
    if (!isObjectRef(view)) return null;
    const entry = ctx.table.peek(view.$ref);
    if (entry?.kind === 'textureView') return entry.format;
    return entry?.kind === 'texture' ? entry.obj.format : null;
  });
}

/** A render pass's own command (not one a bundle may record). */
function renderPass(ctx: ReplayContext, id: number): GPURenderPassEncoder {
  return ctx.table.get(id, 'renderPass').obj;
}

/** The pipeline of `id`, made (an async one still being created is the job's error, as in compute). */
function renderPipeline(ctx: ReplayContext, id: number): GPURenderPipeline {
  const pipeline = ctx.table.get(id, 'renderPipeline');
  if (!pipeline.obj) throw new ReplayError('a render pipeline that is still being created was used');
  return pipeline.obj;
}

/** The 32-bit float formats a color target may blend only with the 'float32-blendable' feature. */
const FLOAT32_FORMATS = new Set(['r32float', 'rg32float', 'rgba32float']);

/** Why the job's device, made without 'float32-blendable', would refuse this pipeline's blending; null when it would not. */
function blendFeatureError(ctx: ReplayContext, descriptor: GPURenderPipelineDescriptor): string | null {
  const features = ctx.table.device?.features;
  if (!features || features.has('float32-blendable')) return null;
  const targets = [...(descriptor.fragment?.targets ?? [])];
  const blended = targets.find((target) => target?.blend !== undefined && FLOAT32_FORMATS.has(target.format));
  return blended ? `a '${blended.format}' color target blends, which needs the 'float32-blendable' feature that requestDevice did not ask for` : null;
}

type Handler<K extends RenderOp> = (ctx: ReplayContext, cmd: CommandOf<K>) => void;

/** The handlers of the render commands, for replay.ts's table. */
export function renderHandlers(helpers: ReplayHelpers): { [K in RenderOp]: Handler<K> } {
  /** A buffer bound for vertices or indices: noted as used, and bounded by the job's size when pooled. */
  const boundBuffer = (ctx: ReplayContext, state: EncoderState, id: number, offset: number, size: number | undefined, what: string) => {
    const buffer = ctx.table.get(id, 'buffer');
    state.used.add(buffer);
    if (!buffer.lease?.pooled) return { buffer: buffer.obj, size };
    const bound = size ?? Math.max(0, buffer.sizeBytes - offset);
    helpers.checkRange(buffer, offset, bound, what);
    return { buffer: buffer.obj, size: bound };
  };

  return {
    createRenderPipeline(ctx, cmd) {
      const rid = cmd.rid;
      let descriptor: GPURenderPipelineDescriptor;
      let stages: RenderStage[];
      try {
        checkDescriptor(ctx, 'createRenderPipeline', cmd.descriptor);
        descriptor = { ...(resolveRefs(ctx, cmd.descriptor) as GPURenderPipelineDescriptor), label: cmd.label };
        const formats = [...(descriptor.fragment?.targets ?? [])].map((target) => target?.format);
        stages = [{ stage: 'vertex' as const, ...descriptor.vertex }, ...(descriptor.fragment ? [{ stage: 'fragment' as const, ...descriptor.fragment }] : [])] as RenderStage[];
        const refusal = blendFeatureError(ctx, descriptor) ?? colorBytesPerSampleError(helpers.limitPair(ctx), formats, 'the fragment state')
          ?? (descriptor.layout === 'auto' ? autoRenderLayoutError(helpers.limitPair(ctx), stages) : null)
          ?? interStageLimitError(helpers.limitPair(ctx), stages, descriptor.primitive?.topology === 'point-list');
        if (refusal) throw new ReplayError(`createRenderPipeline${rid === undefined ? '' : 'Async'}: ${refusal}`);
      } catch (error) {
        if (rid === undefined) throw error;
        const message = (error as Error).message;
        ctx.table.invalidate(cmd.id, 'renderPipeline', message);
        ctx.reply(rid, { error: { type: 'validation', message } });
        return;
      }
      const noteAuto = (pipeline: GPURenderPipeline) => { if (descriptor.layout === 'auto') noteAutoRenderPipeline(pipeline, stages); };
      // An 'auto' pipeline an earlier job compiled from the same descriptor (pipelinePool.ts).
      const pool = pipelinePoolOf(ctx.device);
      const key = renderPipelineKey(cmd.descriptor, (id) => ctx.table.get(id, 'shaderModule').obj);
      const taken = key === null ? null : pool.take<GPURenderPipeline>(key);
      if (taken) {
        taken.label = cmd.label ?? '';
        ctx.pipelinesReused++;
        noteAuto(taken);
        ctx.table.set(cmd.id, { kind: 'renderPipeline', obj: taken });
        if (rid !== undefined) ctx.reply(rid, {});
        return;
      }
      if (rid === undefined) {
        const obj = pool.created(ctx.device, key, () => ctx.device.createRenderPipeline(descriptor));
        noteAuto(obj);
        ctx.table.set(cmd.id, { kind: 'renderPipeline', obj });
        return;
      }
      const entry: { kind: 'renderPipeline'; obj: GPURenderPipeline | null } = { kind: 'renderPipeline', obj: null };
      ctx.table.set(cmd.id, entry);
      ctx.device.createRenderPipelineAsync(descriptor).then(
        (pipeline) => { pool.made(pipeline, key); entry.obj = pipeline; noteAuto(pipeline); ctx.reply(rid, {}); },
        (error: Error & { reason?: string }) => {
          ctx.table.invalidate(cmd.id, 'renderPipeline', error.message);
          ctx.reply(rid, { error: { type: error.reason === 'internal' ? 'internal' : 'validation', message: error.message } });
        },
      );
    },

    renderPipelineBindGroupLayout(ctx, cmd) {
      const pipeline = renderPipeline(ctx, cmd.pipeline);
      const obj = pipeline.getBindGroupLayout(cmd.index);
      noteAutoLayout(obj, pipeline, cmd.index);
      ctx.table.set(cmd.id, { kind: 'bindGroupLayout', obj, dynamicBindings: [] });
    },

    beginRenderPass(ctx, cmd) {
      const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
      checkDescriptor(ctx, 'beginRenderPass', cmd.descriptor);
      const refusal = colorBytesPerSampleError(helpers.limitPair(ctx), attachmentFormats(ctx, cmd.descriptor), 'beginRenderPass');
      if (refusal) throw new ReplayError(refusal);
      const obj = encoder.obj.beginRenderPass({ ...(resolveRefs(ctx, cmd.descriptor) as GPURenderPassDescriptor), label: cmd.label });
      ctx.table.set(cmd.id, { kind: 'renderPass', obj, encoder });
      encoder.passes.push(cmd.id);
    },

    createRenderBundleEncoder(ctx, cmd) {
      checkDescriptor(ctx, 'createRenderBundleEncoder', cmd.descriptor);
      const formats = (cmd.descriptor as { colorFormats?: unknown }).colorFormats;
      const refusal = Array.isArray(formats) ? colorBytesPerSampleError(helpers.limitPair(ctx), formats, 'createRenderBundleEncoder') : null;
      if (refusal) throw new ReplayError(refusal);
      const obj = ctx.device.createRenderBundleEncoder({ ...(cmd.descriptor as unknown as GPURenderBundleEncoderDescriptor), label: cmd.label });
      ctx.table.set(cmd.id, { kind: 'renderBundleEncoder', obj, used: new Set(), error: null, passes: [] });
    },

    finishRenderBundle(ctx, cmd) {
      const encoder = ctx.table.get(cmd.encoder, 'renderBundleEncoder');
      ctx.table.delete(cmd.encoder);
      if (encoder.error !== null) throw new ReplayError(`finish: the render bundle encoder recorded an invalid command: ${encoder.error}`);
      ctx.table.set(cmd.id, { kind: 'renderBundle', obj: encoder.obj.finish({ label: cmd.label }), used: encoder.used });
    },

    renderSetPipeline(ctx, cmd) {
      recorder(ctx, cmd.pass).obj.setPipeline(renderPipeline(ctx, cmd.pipeline));
    },

    renderSetBindGroup(ctx, cmd) {
      const { obj, state } = recorder(ctx, cmd.pass);
      const group = cmd.bindGroup === null ? null : ctx.table.get(cmd.bindGroup, 'bindGroup');
      const offsets = cmd.dynamicOffsets;
      if (group) {
        // As compute's setBindGroup: a dynamic offset keeps its binding inside the job's buffer, at the job's alignment.
        for (let i = 0; offsets && i < Math.min(offsets.length, group.dynamic.length); i++) {
          const binding = group.dynamic[i];
          helpers.checkRange(binding.buffer, binding.offsetBytes + offsets[i], binding.sizeBytes, `setBindGroup(${cmd.index}) dynamic offset ${offsets[i]}`);
        }
        const alignmentError = offsets ? dynamicOffsetAlignmentError(group.obj, offsets) : null;
        if (alignmentError) throw new ReplayError(alignmentError);
        for (const buffer of group.buffers) state.used.add(buffer);
      }
      if (offsets) obj.setBindGroup(cmd.index, group?.obj ?? null, offsets);
      else obj.setBindGroup(cmd.index, group?.obj ?? null);
    },

    setVertexBuffer(ctx, cmd) {
      const { obj, state } = recorder(ctx, cmd.pass);
      if (cmd.buffer === null) {
        obj.setVertexBuffer(cmd.slot, null, cmd.offset, cmd.size);
        return;
      }
      const bound = boundBuffer(ctx, state, cmd.buffer, cmd.offset, cmd.size, `setVertexBuffer(${cmd.slot})`);
      obj.setVertexBuffer(cmd.slot, bound.buffer, cmd.offset, bound.size);
    },

    setIndexBuffer(ctx, cmd) {
      const { obj, state } = recorder(ctx, cmd.pass);
      const bound = boundBuffer(ctx, state, cmd.buffer, cmd.offset, cmd.size, 'setIndexBuffer');
      obj.setIndexBuffer(bound.buffer, cmd.format, cmd.offset, bound.size);
    },

    draw(ctx, cmd) {
      recorder(ctx, cmd.pass).obj.draw(cmd.vertexCount, cmd.instanceCount, cmd.firstVertex, cmd.firstInstance);
    },

    drawIndexed(ctx, cmd) {
      recorder(ctx, cmd.pass).obj.drawIndexed(cmd.indexCount, cmd.instanceCount, cmd.firstIndex, cmd.baseVertex | 0, cmd.firstInstance);
    },

    drawIndirect(ctx, cmd) {
      const { obj, state } = recorder(ctx, cmd.pass);
      const buffer = ctx.table.get(cmd.buffer, 'buffer');
      helpers.checkRange(buffer, cmd.offset, cmd.indexed ? 20 : 16, cmd.indexed ? 'drawIndexedIndirect' : 'drawIndirect');
      state.used.add(buffer);
      if (cmd.indexed) obj.drawIndexedIndirect(buffer.obj, cmd.offset);
      else obj.drawIndirect(buffer.obj, cmd.offset);
    },

    setPassState(ctx, cmd) {
      const pass = renderPass(ctx, cmd.pass);
      const v = cmd.values;
      if (cmd.kind === 'viewport') pass.setViewport(v[0], v[1], v[2], v[3], v[4], v[5]);
      else if (cmd.kind === 'scissorRect') pass.setScissorRect(v[0], v[1], v[2], v[3]);
      else if (cmd.kind === 'blendConstant') pass.setBlendConstant({ r: v[0], g: v[1], b: v[2], a: v[3] });
      else pass.setStencilReference(v[0]);
    },

    occlusionQuery(ctx, cmd) {
      const pass = renderPass(ctx, cmd.pass);
      if (cmd.index === undefined) pass.endOcclusionQuery();
      else pass.beginOcclusionQuery(cmd.index);
    },

    executeBundles(ctx, cmd) {
      const pass = ctx.table.get(cmd.pass, 'renderPass');
      const bundles = cmd.bundles.map((id) => ctx.table.get(id, 'renderBundle'));
      for (const bundle of bundles) for (const buffer of bundle.used) pass.encoder.used.add(buffer);
      pass.obj.executeBundles(bundles.map((b) => b.obj));
    },

    endRenderPass(ctx, cmd) {
      renderPass(ctx, cmd.pass).end();
    },

    renderSetImmediates(ctx, cmd) {
      recorder(ctx, cmd.pass).obj.setImmediates(cmd.offset, helpers.bytesAt(ctx, cmd.data));
    },
  };
}
