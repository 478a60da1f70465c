/**
 * Replays one job's commands on the shared device. Each handler runs
 * synchronously inside the session's current error-scope segment; our own
 * checks (ids, virtual buffer sizes, memory shares) throw ReplayError, which the
 * session turns into a GPU error of that job. Async results (maps, pipelines,
 * compilation info, work done) answer through `reply`.
 *
 * Past 450 lines on purpose: one short handler per command of the table, in
 * the table's order, so a command's replay is found by its name; families with
 * state of their own live beside it (textures.ts, render.ts, objects.ts).
 */
import { COMMANDS, DATA_CHUNK_BYTES, REQUEST_OPS, type Command, type CommandOf, type CommandOp, type DataRef, type GpuErrorJson } from '../protocol/commands.js';
import type { MemoryManager } from '../memory/memoryManager.js';
import { discardBuffer } from './discard.js';
import { pollDawnSoon } from './dawnPolling.js';
import { checkRingTarget, sendMappedBytes } from './ringReadback.js';
import { whenQueueDone } from './queueActivity.js';
import {
  bindGroupLayoutLimitError, bindingLimitsStricter, bindingSizeLimitError, computePipelineLimitError, dynamicOffsetAlignmentError, noteDynamicAlignments,
  noteLayoutEntries, notePipeline, noteShaderModule, pipelineLayoutLimitError, type LimitPair,
} from './jobLimits.js';
import { groupLayoutOf } from './pipelineGroupLayouts.js';
import { computePipelineKey, pipelinePoolOf } from './pipelinePool.js';
import { RENDER_CREATES, RENDER_ENCODER_OPS, renderHandlers } from './render.js';
import { TEXTURE_CREATES, TEXTURE_ENCODER_OPS, destroyTexture, textureHandlers } from './textures.js';
import { ObjectTable, ReplayError, type BufferEntry, type DynamicBinding, type EntryKind, type UsedBuffers } from './objects.js';

const MAP_READ = 0x1;
const MAP_WRITE = 0x2;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const KNOWN_USAGE = 0x3ff;
/** WebGPU's most queries in one query set, and the bytes each takes (a 64-bit result). */
const MAX_QUERY_COUNT = 4096;
const QUERY_BYTES = 8;

/** What a handler may use. */
export interface ReplayContext {
  readonly jobId: string;
  readonly device: GPUDevice;
  readonly table: ObjectTable;
  readonly memory: MemoryManager;
  readonly payload: Uint8Array;
  /** Answers a request id: a result, bytes, or an error for the job. Each answer must mark `requests` (see RequestWatch). */
  reply(rid: number, result: unknown, payload?: Uint8Array[]): void;
  replyError(rid: number, message: string, gpu?: GpuErrorJson): void;
  /** Bytes in the bulk channel: a file of this job (then removed) or its scratch file; throws ReplayError if unusable. */
  readBulk(ref: Exclude<DataRef, [number, number]>): Uint8Array;
  /** The job's scratch ring, as the service's own mapping of it (readbacks go there: ringReadback.ts); undefined without one. */
  ring(): Uint8Array | undefined;
  /** The service's own command buffers to run before the job's in this submit (the iteration timer's start). */
  submitPrefix(): GPUCommandBuffer[];
  /** The service's own command buffers to run after the job's in this submit (the iteration timer's end). */
  submitSuffix(): GPUCommandBuffer[];
  /** The request of the command replaying now, and whether its handler answered it yet. */
  readonly requests: RequestWatch;
  /** Pipelines the job got already compiled, kept from ended jobs or destroyed devices (core/executor/pipelinePool.ts). */
  pipelinesReused: number;
}

/**
 * The request id of the command whose handler runs now (0: none), and whether
 * that handler answered it, so a handler that throws after answering is not
 * answered twice. The context's `reply` and `replyError` set `answered` when they
 * answer `rid`; an answer from a promise comes after the handler returned, when
 * `rid` names another command or none. One per session, reused: no object per command.
 */
export interface RequestWatch {
  rid: number;
  answered: boolean;
}

/** Marks `watch` answered when `rid` is the request replaying now (the context's reply functions call it). */
export function noteAnswer(watch: RequestWatch, rid: number): void {
  if (rid === watch.rid) watch.answered = true;
}

function bytesAt(ctx: ReplayContext, ref: DataRef): Uint8Array {
  if (!Array.isArray(ref)) return ctx.readBulk(ref);
  const [offset, length] = ref;
  if (offset + length > ctx.payload.byteLength) {
    throw new ReplayError(`data [${offset}, ${offset + length}) is outside the frame's ${ctx.payload.byteLength}-byte payload`);
  }
  return ctx.payload.subarray(offset, offset + length);
}

/** Checks a range against the job's view of a buffer (the pooled real buffer may be larger). */
function checkRange(buffer: BufferEntry, offset: number, size: number, what: string): void {
  if (offset + size > buffer.sizeBytes) {
    throw new ReplayError(`${what}: range [${offset}, ${offset + size}) is past the end of the ${buffer.sizeBytes}-byte buffer '${buffer.obj.label}'`);
  }
}

/** Whether a descriptor breaks rules Dawn would reject; such buffers go to Dawn unaccounted so its own message reaches the job. */
function invalidBufferDescriptor(size: number, usage: number, mappedAtCreation: boolean, maxBufferSize: number): boolean {
  if (usage === 0 || (usage & ~KNOWN_USAGE) !== 0) return true;
  if ((usage & MAP_READ) && (usage & ~(MAP_READ | COPY_DST))) return true;
  if ((usage & MAP_WRITE) && (usage & ~(MAP_WRITE | COPY_SRC))) return true;
  if (mappedAtCreation && size % 4 !== 0) return true;
  return size > maxBufferSize;
}

/** What every bind group, and every layout, without dynamic offsets shares: no array each (frozen, so a write would throw). */
const NO_DYNAMIC = Object.freeze([]) as unknown as DynamicBinding[];
const NO_DYNAMIC_BINDINGS = Object.freeze([]) as unknown as number[];

/** A buffer binding as createBindGroup hands it to Dawn. */
interface BufferBindingEntry {
  binding: number;
  resource: { buffer: GPUBuffer; offset: number; size: number | undefined };
}

/**
 * createBindGroup's descriptor and its entries, by entry count, reused by every call: dawn.node reads a
 * descriptor within the call and keeps none of it, and TF.js makes a bind group per dispatch (179 a step of
 * the zoo's small RNN), so fresh objects each time were the replay's largest source of garbage.
 */
const bindGroupDescriptor: { layout: GPUBindGroupLayout; entries: BufferBindingEntry[]; label: string | undefined } = {
  layout: undefined as unknown as GPUBindGroupLayout, entries: [], label: undefined,
};
const entriesByCount: BufferBindingEntry[][] = [];
/** Entry counts up to this one are kept (a job may send up to MAX_BINDINGS entries; larger lists are made each time). */
const KEPT_ENTRY_COUNT = 16;

/** `count` entries to fill: kept ones for small counts, new ones beyond. */
function bindGroupEntries(count: number): BufferBindingEntry[] {
  let entries = entriesByCount[count];
  if (!entries) {
    entries = Array.from({ length: count }, () => ({ binding: 0, resource: { buffer: undefined as unknown as GPUBuffer, offset: 0, size: undefined } }));
    if (count <= KEPT_ENTRY_COUNT) entriesByCount[count] = entries;
  }
  return entries;
}

type Handler<K extends CommandOp> = (ctx: ReplayContext, cmd: CommandOf<K>) => void;
type CreatingOp = { id: number };

/** The job's own limit `key`, when it declared one. */
function jobLimit(ctx: ReplayContext, key: string): number {
  return ctx.table.device?.limits[key] ?? Infinity;
}

/**
 * Each limit pair made so far, by what the job's limits come from (its device's config; the shared device when
 * it declared none). Neither changes once made, so each pair is read once and shared: the checks run per binding.
 */
const limitPairs = new WeakMap<object, LimitPair>();

/** The job's limit and the shared device's, for the checks of jobLimits.ts. */
function limitPair(ctx: ReplayContext): LimitPair {
  const owner = ctx.table.device ?? ctx.device;
  let pair = limitPairs.get(owner);
  if (!pair) {
    const known = new Map<string, { job: number; device: number }>();
    const { device } = ctx;
    const jobLimits = ctx.table.device?.limits;
    pair = (key) => {
      let limits = known.get(key);
      if (!limits) {
        limits = { job: jobLimits?.[key] ?? Infinity, device: (device.limits as unknown as Record<string, number>)[key] ?? Infinity };
        known.set(key, limits);
      }
      return limits;
    };
    limitPairs.set(owner, pair);
  }
  return pair;
}

const handlers: { [K in CommandOp]?: Handler<K> } = {
  createBuffer(ctx, cmd) {
    const mappedAtCreation = Boolean(cmd.mappedAtCreation);
    if (cmd.size > jobLimit(ctx, 'maxBufferSize')) {
      throw new ReplayError(`createBuffer: size ${cmd.size} exceeds the device's maxBufferSize ${jobLimit(ctx, 'maxBufferSize')} (ask for more in requestDevice's requiredLimits)`);
    }
    if (invalidBufferDescriptor(cmd.size, cmd.usage, mappedAtCreation, ctx.device.limits.maxBufferSize)) {
      const obj = ctx.device.createBuffer({ size: cmd.size, usage: cmd.usage, mappedAtCreation, label: cmd.label });
      ctx.table.set(cmd.id, {
        kind: 'buffer', obj, sizeBytes: cmd.size, usage: cmd.usage, lease: null, destroyed: false, mapped: null, mappedAtCreation, label: cmd.label,
        discarded: false, discardedLease: null,
      });
      return;
    }
    const result = ctx.memory.allocate(ctx.jobId, { size: cmd.size, usage: cmd.usage, label: cmd.label, mappedAtCreation });
    if (!result.ok) throw new ReplayError(result.message, result.errorType);
    ctx.table.set(cmd.id, {
      kind: 'buffer', obj: result.lease.buffer, sizeBytes: cmd.size, usage: cmd.usage,
      lease: result.lease, destroyed: false, mapped: null, mappedAtCreation, label: cmd.label, discarded: false, discardedLease: null,
    });
  },

  destroy(ctx, cmd) {
    destroyEntry(ctx, cmd.id);
  },

  release(ctx, cmd) {
    // The job dropped its last reference: what a browser's garbage collector frees. An encoder takes its passes along.
    const entry = ctx.table.peek(cmd.id);
    if (entry?.kind === 'commandEncoder') for (const pass of entry.passes) ctx.table.delete(pass);
    destroyEntry(ctx, cmd.id);
    ctx.table.delete(cmd.id);
  },

  destroyDevice(ctx) {
    // The current device's objects only: the job's other devices keep theirs. Its pipelines stay compiled
    // for later jobs (pipelinePool.ts); nothing of this device's can be used with the job's other devices.
    const pipelines = pipelinePoolOf(ctx.device);
    for (const id of ctx.table.idsOf(ctx.table.deviceId)) {
      pipelines.retainEntry(ctx.table.peek(id));
      destroyEntry(ctx, id);
      ctx.table.delete(id);
    }
  },

  writeBuffer(ctx, cmd) {
    const buffer = ctx.table.get(cmd.id, 'buffer');
    // A pooled buffer's real buffer may already be lent again: never write through a destroyed one.
    if (buffer.destroyed) throw new ReplayError(`writeBuffer to the destroyed buffer '${buffer.obj.label}'`);
    const data = bytesAt(ctx, cmd.data);
    checkRange(buffer, cmd.offset, data.byteLength, 'writeBuffer');
    ctx.device.queue.writeBuffer(buffer.obj, cmd.offset, data);
  },

  mapAsync(ctx, cmd) {
    let buffer: BufferEntry;
    let size: number;
    try {
      buffer = ctx.table.get(cmd.id, 'buffer');
      size = cmd.size ?? Math.max(0, buffer.sizeBytes - cmd.offset);
      checkRingTarget(ctx, cmd.ring, Math.min(size, DATA_CHUNK_BYTES));
    } catch (error) {
      ctx.replyError(cmd.rid, (error as Error).message);
      throw error;
    }
    buffer.obj.mapAsync(cmd.mode, cmd.offset, size).then(
      () => {
        if (buffer.destroyed) {
          ctx.replyError(cmd.rid, 'the buffer was destroyed before mapAsync finished');
          return;
        }
        const range = buffer.obj.getMappedRange(cmd.offset, size);
        buffer.mapped = { offset: cmd.offset, range };
        sendMappedBytes(ctx, cmd.rid, { offset: cmd.offset, size }, new Uint8Array(range, 0, Math.min(size, DATA_CHUNK_BYTES)), cmd.ring);
      },
      (error: Error) => ctx.replyError(cmd.rid, `mapAsync failed: ${error.message}`),
    );
    pollDawnSoon();
  },

  readMapped(ctx, cmd) {
    try {
      const mapped = ctx.table.get(cmd.id, 'buffer').mapped;
      const at = cmd.offset - (mapped?.offset ?? 0);
      if (!mapped || at < 0 || cmd.size > DATA_CHUNK_BYTES || at + cmd.size > mapped.range.byteLength) {
        throw new ReplayError(`readMapped: [${cmd.offset}, ${cmd.offset + cmd.size}) is not a piece of the mapped range`);
      }
      checkRingTarget(ctx, cmd.ring, cmd.size);
      sendMappedBytes(ctx, cmd.rid, {}, new Uint8Array(mapped.range, at, cmd.size), cmd.ring);
    } catch (error) {
      ctx.replyError(cmd.rid, (error as Error).message);
      throw error;
    }
  },

  writeMapped(ctx, cmd) {
    const buffer = ctx.table.get(cmd.id, 'buffer');
    if (!buffer.mapped && buffer.mappedAtCreation && buffer.obj.mapState === 'mapped') {
      buffer.mapped = { offset: 0, range: buffer.obj.getMappedRange() };
    }
    const data = bytesAt(ctx, cmd.data);
    // Not mapped here (its mapping failed, or it was destroyed): the bytes go nowhere, as on a local device.
    const mapped = buffer.mapped;
    if (!mapped) return;
    const at = cmd.offset - mapped.offset;
    if (at < 0 || at + data.byteLength > mapped.range.byteLength) throw new ReplayError('writeMapped: the written range is outside the mapped range');
    new Uint8Array(mapped.range).set(data, at);
  },

  unmap(ctx, cmd) {
    const buffer = ctx.table.get(cmd.id, 'buffer');
    buffer.mapped = null;
    buffer.mappedAtCreation = false;
    buffer.obj.unmap();
  },

  createShaderModule(ctx, cmd) {
    const obj = ctx.device.createShaderModule({ code: cmd.code, label: cmd.label });
    noteShaderModule(obj, cmd.code);
    ctx.table.set(cmd.id, { kind: 'shaderModule', obj });
  },

  compilationInfo(ctx, cmd) {
    const module = ctx.table.get(cmd.id, 'shaderModule');
    module.obj.getCompilationInfo().then(
      (info) => ctx.reply(cmd.rid, {
        messages: [...info.messages].map((m) => ({
          message: m.message, type: m.type, lineNum: m.lineNum, linePos: m.linePos, offset: m.offset, length: m.length,
        })),
      }),
      (error: Error) => ctx.replyError(cmd.rid, error.message),
    );
  },

  createBindGroupLayout(ctx, cmd) {
    const obj = ctx.device.createBindGroupLayout({ entries: cmd.entries as GPUBindGroupLayoutEntry[], label: cmd.label });
    noteLayoutEntries(obj, cmd.entries);
    const limitError = bindGroupLayoutLimitError(limitPair(ctx), obj);
    if (limitError) throw new ReplayError(limitError);
    // setBindGroup's dynamic offsets apply to these bindings in increasing binding order (WebGPU spec).
    const dynamicBindings = cmd.entries.filter((e) => e.buffer?.hasDynamicOffset).map((e) => e.binding).sort((a, b) => a - b);
    ctx.table.set(cmd.id, { kind: 'bindGroupLayout', obj, dynamicBindings });
  },

  createPipelineLayout(ctx, cmd) {
    const bindGroupLayouts = cmd.bindGroupLayouts.map((id) => (id === null ? null : ctx.table.get(id, 'bindGroupLayout').obj));
    const limitError = pipelineLayoutLimitError(limitPair(ctx), bindGroupLayouts);
    if (limitError) throw new ReplayError(limitError);
    const obj = ctx.device.createPipelineLayout({
      bindGroupLayouts: bindGroupLayouts as GPUBindGroupLayout[], label: cmd.label,
      ...(cmd.immediateSize === undefined ? {} : { immediateSize: cmd.immediateSize }),
    });
    ctx.table.set(cmd.id, { kind: 'pipelineLayout', obj });
  },

  createComputePipeline(ctx, cmd) {
    const describe = (): GPUComputePipelineDescriptor => ({
      label: cmd.label,
      layout: cmd.layout === 'auto' ? 'auto' : ctx.table.get(cmd.layout, 'pipelineLayout').obj,
      compute: { module: ctx.table.get(cmd.module, 'shaderModule').obj, entryPoint: cmd.entryPoint, constants: cmd.constants },
    });
    // The job's own limits, where the shared device's are larger (Dawn checks the rest).
    const pastLimits = (module: GPUShaderModule) => computePipelineLimitError(limitPair(ctx), module, cmd.entryPoint, cmd.constants, cmd.layout === 'auto');
    // An 'auto' pipeline an earlier job compiled from the same source, entry point and constants (pipelinePool.ts).
    const pool = pipelinePoolOf(ctx.device);
    const keyOf = (module: GPUShaderModule): string | null => (cmd.layout === 'auto' ? computePipelineKey(module, cmd.entryPoint, cmd.constants) : null);
    const retained = (key: string | null): GPUComputePipeline | null => {
      const pipeline = key === null ? null : pool.take<GPUComputePipeline>(key);
      if (!pipeline) return null;
      pipeline.label = cmd.label ?? '';
      ctx.pipelinesReused++;
      return pipeline;
    };
    const noted = (pipeline: GPUComputePipeline, module: GPUShaderModule): GPUComputePipeline => {
      notePipeline(pipeline, module, cmd.layout === 'auto' ? { entryPoint: cmd.entryPoint, constants: cmd.constants } : null);
      return pipeline;
    };
    if (cmd.rid === undefined) {
      const descriptor = describe();
      const module = descriptor.compute.module;
      const limitError = pastLimits(module);
      if (limitError) throw new ReplayError(`createComputePipeline: ${limitError}`);
      const key = keyOf(module);
      const obj = retained(key) ?? pool.created(ctx.device, key, () => ctx.device.createComputePipeline(descriptor));
      ctx.table.set(cmd.id, { kind: 'computePipeline', obj: noted(obj, module) });
      return;
    }
    const rid = cmd.rid;
    let descriptor: GPUComputePipelineDescriptor;
    try {
      descriptor = describe();
      const limitError = pastLimits(descriptor.compute.module);
      if (limitError) throw new ReplayError(`createComputePipelineAsync: ${limitError}`);
    } catch (error) {
      // createComputePipelineAsync rejects with a GPUPipelineError, as for any invalid descriptor.
      const message = (error as Error).message;
      ctx.table.invalidate(cmd.id, 'computePipeline', message);
      ctx.reply(rid, { error: { type: 'validation', message } });
      return;
    }
    const module = descriptor.compute.module;
    const key = keyOf(module);
    const taken = retained(key);
    if (taken) {
      ctx.table.set(cmd.id, { kind: 'computePipeline', obj: noted(taken, module) });
      ctx.reply(rid, {});
      return;
    }
    const entry: { kind: 'computePipeline'; obj: GPUComputePipeline | null } = { kind: 'computePipeline', obj: null };
    ctx.table.set(cmd.id, entry);
    ctx.device.createComputePipelineAsync(descriptor).then(
      (pipeline) => { pool.made(pipeline, key); entry.obj = noted(pipeline, module); ctx.reply(rid, {}); },
      (error: Error & { reason?: string }) => {
        ctx.table.invalidate(cmd.id, 'computePipeline', error.message);
        ctx.reply(rid, { error: { type: error.reason === 'internal' ? 'internal' : 'validation', message: error.message } });
      },
    );
  },

  getBindGroupLayout(ctx, cmd) {
    const pipeline = ctx.table.get(cmd.pipeline, 'computePipeline');
    if (!pipeline.obj) throw new ReplayError('getBindGroupLayout on a pipeline that is still being created');
    // An 'auto' layout never has dynamic offsets.
    ctx.table.set(cmd.id, { kind: 'bindGroupLayout', obj: groupLayoutOf(ctx.device, pipeline.obj, cmd.index), dynamicBindings: NO_DYNAMIC_BINDINGS });
  },

  createBindGroup(ctx, cmd) {
    const layout = ctx.table.get(cmd.layout, 'bindGroupLayout');
    const limits = limitPair(ctx);
    const checkSizes = bindingLimitsStricter(limits);
    const hasDynamic = layout.dynamicBindings.length > 0;
    const count = cmd.entries.length;
    const buffers: BufferEntry[] = [];
    const dynamic: DynamicBinding[] = hasDynamic ? [] : NO_DYNAMIC;
    const entries = bindGroupEntries(count);
    for (let i = 0; i < count; i++) {
      const entry = cmd.entries[i];
      const buffer = ctx.table.get(entry.buffer, 'buffer');
      buffers.push(buffer);
      const offset = entry.offset ?? 0;
      let size = entry.size;
      if (buffer.lease?.pooled) {
        // Bind the job's size, not the pooled buffer's, so arrayLength() in WGSL sees what it asked for.
        size ??= Math.max(0, buffer.sizeBytes - offset);
        checkRange(buffer, offset, size, `createBindGroup binding ${entry.binding}`);
      }
      const limitError = checkSizes ? bindingSizeLimitError(limits, layout.obj, entry.binding, offset, size ?? Math.max(0, buffer.sizeBytes - offset)) : null;
      if (limitError) throw new ReplayError(limitError);
      if (hasDynamic && layout.dynamicBindings.includes(entry.binding)) {
        dynamic.push({ binding: entry.binding, buffer, offsetBytes: offset, sizeBytes: size ?? Math.max(0, buffer.sizeBytes - offset) });
      }
      const out = entries[i];
      out.binding = entry.binding;
      out.resource.buffer = buffer.obj;
      out.resource.offset = offset;
      out.resource.size = size;
    }
    bindGroupDescriptor.layout = layout.obj;
    bindGroupDescriptor.entries = entries;
    bindGroupDescriptor.label = cmd.label;
    const obj = ctx.device.createBindGroup(bindGroupDescriptor);
    if (hasDynamic && dynamic.length > 0) {
      dynamic.sort((a, b) => a.binding - b.binding);
      noteDynamicAlignments(limits, obj, layout.obj, dynamic.map((d) => d.binding));
    }
    ctx.table.set(cmd.id, { kind: 'bindGroup', obj, buffers, dynamic, builtOn: buffers.map((b) => b.obj), usedBy: undefined, currentAt: -1 });
  },

  createQuerySet(ctx, cmd) {
    if (cmd.type === 'timestamp' && ctx.table.device && !ctx.table.device.features.has('timestamp-query')) {
      throw new ReplayError("createQuerySet: timestamp queries need the 'timestamp-query' feature, which requestDevice did not ask for");
    }
    const descriptor: GPUQuerySetDescriptor = { type: cmd.type, count: cmd.count, label: cmd.label };
    if (cmd.count > MAX_QUERY_COUNT) {
      // Dawn's error object holds no memory, and its own message reaches the job.
      ctx.table.set(cmd.id, { kind: 'querySet', obj: ctx.device.createQuerySet(descriptor), lease: null });
      return;
    }
    const result = ctx.memory.allocateResource(ctx.jobId, 'querySet', cmd.count * QUERY_BYTES, () => ctx.device.createQuerySet(descriptor));
    if (!result.ok) throw new ReplayError(result.message, result.errorType);
    ctx.table.set(cmd.id, { kind: 'querySet', obj: result.lease.resource, lease: result.lease });
  },

  createCommandEncoder(ctx, cmd) {
    ctx.table.set(cmd.id, { kind: 'commandEncoder', obj: ctx.device.createCommandEncoder({ label: cmd.label }), used: new Set(), error: null, passes: [] });
  },

  beginComputePass(ctx, cmd) {
    const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
    const tw = cmd.timestampWrites;
    const obj = encoder.obj.beginComputePass({
      label: cmd.label,
      timestampWrites: tw ? {
        querySet: ctx.table.get(tw.querySet, 'querySet').obj,
        beginningOfPassWriteIndex: tw.beginningOfPassWriteIndex,
        endOfPassWriteIndex: tw.endOfPassWriteIndex,
      } : undefined,
    });
    ctx.table.set(cmd.id, { kind: 'computePass', obj, encoder });
    encoder.passes.push(cmd.id);
  },

  setPipeline(ctx, cmd) {
    const pipeline = ctx.table.get(cmd.pipeline, 'computePipeline');
    if (!pipeline.obj) throw new ReplayError('setPipeline with a pipeline that is still being created');
    ctx.table.get(cmd.pass, 'computePass').obj.setPipeline(pipeline.obj);
  },

  setBindGroup(ctx, cmd) {
    const pass = ctx.table.get(cmd.pass, 'computePass');
    const group = cmd.bindGroup === null ? null : ctx.table.get(cmd.bindGroup, 'bindGroup');
    const offsets = cmd.dynamicOffsets;
    if (offsets && group) {
      // A dynamic offset moves a binding's range: it must stay inside the job's buffer, not the (larger) pooled one.
      // Dawn checks the count and the alignment; a miscount is its error, so only pairs that exist are checked here.
      const checked = Math.min(offsets.length, group.dynamic.length);
      for (let i = 0; i < checked; i++) {
        const binding = group.dynamic[i];
        checkRange(binding.buffer, binding.offsetBytes + offsets[i], binding.sizeBytes, `setBindGroup(${cmd.index}) dynamic offset ${offsets[i]} for binding ${binding.binding}`);
      }
    }
    // The job's offset alignment, where it is coarser than the shared device's.
    const alignmentError = group && offsets ? dynamicOffsetAlignmentError(group.obj, offsets) : null;
    if (alignmentError) throw new ReplayError(alignmentError);
    // A group set again in the same encoder names the same buffers: added once.
    if (group && group.usedBy !== pass.encoder) {
      group.usedBy = pass.encoder;
      for (const buffer of group.buffers) pass.encoder.used.add(buffer);
    }
    // dawn.node converts an offsets argument even when empty (~0.25 µs): none is passed when the job gave none.
    if (offsets) pass.obj.setBindGroup(cmd.index, group?.obj ?? null, offsets);
    else pass.obj.setBindGroup(cmd.index, group?.obj ?? null);
  },

  dispatch(ctx, cmd) {
    const most = ctx.table.maxWorkgroupsPerDimension;
    if (cmd.x > most || cmd.y > most || cmd.z > most) {
      throw new ReplayError(`dispatchWorkgroups(${cmd.x}, ${cmd.y}, ${cmd.z}) exceeds the device's maxComputeWorkgroupsPerDimension ${most}`);
    }
    const pass = ctx.table.get(cmd.pass, 'computePass').obj;
    // dawn.node converts every argument it is given; y and z default to 1 (WebGPU), so a 1 is left for it to fill in.
    if (cmd.z !== 1) pass.dispatchWorkgroups(cmd.x, cmd.y, cmd.z);
    else if (cmd.y !== 1) pass.dispatchWorkgroups(cmd.x, cmd.y);
    else pass.dispatchWorkgroups(cmd.x);
  },

  dispatchIndirect(ctx, cmd) {
    const pass = ctx.table.get(cmd.pass, 'computePass');
    const buffer = ctx.table.get(cmd.buffer, 'buffer');
    checkRange(buffer, cmd.offset, 12, 'dispatchWorkgroupsIndirect');
    pass.encoder.used.add(buffer);
    pass.obj.dispatchWorkgroupsIndirect(buffer.obj, cmd.offset);
  },

  setImmediates(ctx, cmd) {
    const pass = ctx.table.get(cmd.pass, 'computePass');
    pass.obj.setImmediates(cmd.offset, bytesAt(ctx, cmd.data));
  },

  endPass(ctx, cmd) {
    ctx.table.get(cmd.pass, 'computePass').obj.end();
  },

  debugMarker(ctx, cmd) {
    const target = ctx.table.peek(cmd.target);
    if (!target || (target.kind !== 'computePass' && target.kind !== 'commandEncoder' && target.kind !== 'renderPass' && target.kind !== 'renderBundleEncoder')) {
      throw new ReplayError(`debug marker on id ${cmd.target}, which is not a live encoder`);
    }
    if (cmd.kind === 'push') target.obj.pushDebugGroup(cmd.label ?? '');
    else if (cmd.kind === 'pop') target.obj.popDebugGroup();
    else target.obj.insertDebugMarker(cmd.label ?? '');
  },

  copyBufferToBuffer(ctx, cmd) {
    const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
    const src = ctx.table.get(cmd.src, 'buffer');
    const dst = ctx.table.get(cmd.dst, 'buffer');
    checkRange(src, cmd.srcOffset, cmd.size, 'copyBufferToBuffer source');
    checkRange(dst, cmd.dstOffset, cmd.size, 'copyBufferToBuffer destination');
    encoder.used.add(src).add(dst);
    encoder.obj.copyBufferToBuffer(src.obj, cmd.srcOffset, dst.obj, cmd.dstOffset, cmd.size);
  },

  clearBuffer(ctx, cmd) {
    const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
    const buffer = ctx.table.get(cmd.buffer, 'buffer');
    const offset = cmd.offset ?? 0;
    const size = cmd.size ?? Math.max(0, buffer.sizeBytes - offset);
    checkRange(buffer, offset, size, 'clearBuffer');
    encoder.used.add(buffer);
    encoder.obj.clearBuffer(buffer.obj, offset, size);
  },

  resolveQuerySet(ctx, cmd) {
    const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
    const dst = ctx.table.get(cmd.dst, 'buffer');
    checkRange(dst, cmd.dstOffset, cmd.count * 8, 'resolveQuerySet destination');
    encoder.used.add(dst);
    encoder.obj.resolveQuerySet(ctx.table.get(cmd.querySet, 'querySet').obj, cmd.first, cmd.count, dst.obj, cmd.dstOffset);
  },

  finish(ctx, cmd) {
    const encoder = ctx.table.get(cmd.encoder, 'commandEncoder');
    for (const pass of encoder.passes) ctx.table.delete(pass);
    if (encoder.error !== null) {
      ctx.table.delete(cmd.encoder);
      throw new ReplayError(`finish: the encoder recorded an invalid command: ${encoder.error}`);
    }
    ctx.table.set(cmd.id, { kind: 'commandBuffer', obj: encoder.obj.finish({ label: cmd.label }), used: encoder.used });
    ctx.table.delete(cmd.encoder);
  },

  submit(ctx, cmd) {
    const buffers = cmd.commandBuffers.map((id) => ctx.table.get(id, 'commandBuffer'));
    for (const cb of buffers) {
      for (const used of cb.used as UsedBuffers) {
        if (used.destroyed) throw new ReplayError(`destroyed buffer '${used.obj.label}' used in a submit`);
      }
    }
    ctx.device.queue.submit([...ctx.submitPrefix(), ...buffers.map((cb) => cb.obj), ...ctx.submitSuffix()]);
    for (const id of cmd.commandBuffers) ctx.table.delete(id);
  },

  workDone(ctx, cmd) {
    whenQueueDone(ctx.device, () => ctx.reply(cmd.rid, {}), (error: Error) => ctx.replyError(cmd.rid, error.message));
  },

  setLabel(ctx, cmd) {
    const entry = ctx.table.peek(cmd.id);
    if (entry?.kind === 'buffer') entry.label = cmd.label;
    if (entry?.kind === 'buffer' && entry.discarded) return; // named when it is allocated again
    if (entry && entry.kind !== 'invalid' && entry.obj) entry.obj.label = cmd.label;
  },

  discard(ctx, cmd) {
    const entry = ctx.table.peek(cmd.id);
    if (entry?.kind === 'buffer' && ctx.table.deviceOf(cmd.id) === ctx.table.deviceId) discardBuffer(ctx, entry);
  },
  ...textureHandlers({ bytesAt, checkRange, limitPair }),
  ...renderHandlers({ bytesAt, checkRange, limitPair }),
};

function destroyEntry(ctx: ReplayContext, id: number): void {
  const entry = ctx.table.peek(id);
  if (entry?.kind === 'buffer') {
    if (entry.destroyed) return;
    entry.destroyed = true;
    entry.mapped = null;
    if (entry.discarded) {
      // Its memory went back at the discard; `obj` is a placeholder.
      entry.discarded = false;
      entry.discardedLease = null;
    }
    else if (entry.lease) ctx.memory.free(entry.lease);
    else entry.obj.destroy();
  } else if (entry?.kind === 'querySet') {
    if (entry.lease) ctx.memory.freeResource(entry.lease);
    else entry.obj.destroy();
  } else if (entry?.kind === 'texture') destroyTexture(ctx, entry);
}

/** Commands recorded into an encoder or pass, and the field naming it: their failures surface at finish(). */
const ENCODER_OPS: Partial<Record<CommandOp, 'encoder' | 'pass' | 'target'>> = {
  beginComputePass: 'encoder', copyBufferToBuffer: 'encoder', clearBuffer: 'encoder', resolveQuerySet: 'encoder',
  setPipeline: 'pass', setBindGroup: 'pass', dispatch: 'pass', dispatchIndirect: 'pass', endPass: 'pass', debugMarker: 'target',
  setImmediates: 'pass', ...TEXTURE_ENCODER_OPS, ...RENDER_ENCODER_OPS,
};

/** The kind of object a creating command makes, so a failed creation leaves an invalid entry. */
const CREATES: Partial<Record<CommandOp, EntryKind>> = {
  createBuffer: 'buffer', createShaderModule: 'shaderModule', createBindGroupLayout: 'bindGroupLayout',
  createPipelineLayout: 'pipelineLayout', createComputePipeline: 'computePipeline', getBindGroupLayout: 'bindGroupLayout',
  createBindGroup: 'bindGroup', createQuerySet: 'querySet', createCommandEncoder: 'commandEncoder',
  beginComputePass: 'computePass', finish: 'commandBuffer', ...TEXTURE_CREATES, ...RENDER_CREATES,
};

/**
 * What replay needs of each op, found by its opcode (commandTable.ts's `code`) with one array read per command:
 * its handler, the kind it creates, and the field naming the encoder it records into. Made once from the tables
 * above; an opcode without a handler has no row.
 */
interface OpInfo {
  readonly handler: Handler<CommandOp>;
  readonly creates: EntryKind | undefined;
  readonly encoderField: 'encoder' | 'pass' | 'target' | undefined;
  /** Whether its commands carry a request id (the others' `rid` is not even read: most commands have none). */
  readonly awaits: boolean;
}

const OP_INFO: readonly (OpInfo | undefined)[] = (() => {
  const rows: (OpInfo | undefined)[] = new Array<OpInfo | undefined>(256).fill(undefined);
  for (const op of Object.keys(handlers) as CommandOp[]) {
    rows[COMMANDS[op].code] = { handler: handlers[op] as Handler<CommandOp>, creates: CREATES[op], encoderField: ENCODER_OPS[op], awaits: REQUEST_OPS.has(op) };
  }
  return rows;
})();

/** The kind of object command `op` creates (its `id`), or undefined for a command that creates none. */
export function createdKind(op: string): EntryKind | undefined {
  return Object.hasOwn(CREATES, op) ? CREATES[op as CommandOp] : undefined;
}

/**
 * Replays one command, whose opcode is `code` (the decoded batch's `codes`). Returns the GPU error our own checks
 * raised, if any (Dawn's own errors reach the job through the open segment: core/executor/errorScopes.ts).
 */
export function replay(ctx: ReplayContext, cmd: Command, code: number): GpuErrorJson | null {
  const info = OP_INFO[code];
  if (!info) return { type: 'validation', message: `command '${cmd.op}' cannot be replayed here` };
  // A command that awaits gets exactly one reply: if its handler throws before answering, the error is the answer.
  const rid = info.awaits ? (cmd as { rid?: number }).rid : undefined;
  const kind = info.creates;
  if (kind) {
    // The client picks ids; a live one (valid or invalid) is never overwritten, or its object and memory would be orphaned.
    const id = (cmd as unknown as CreatingOp).id;
    const live = ctx.table.peek(id);
    if (live) {
      const message = `${cmd.op}: id ${id} is already in use by a live ${live.kind === 'invalid' ? `invalid ${live.of}` : live.kind}; release it first or use a new id`;
      if (rid !== undefined) ctx.replyError(rid, message);
      return { type: 'validation', message };
    }
  }
  const watch = ctx.requests;
  watch.rid = rid ?? 0;
  watch.answered = false;
  try {
    info.handler(ctx, cmd as never);
    return null;
  } catch (error) {
    const message = (error as Error).message;
    if (rid !== undefined && !watch.answered) ctx.replyError(rid, `${cmd.op}: ${message}`);
    const field = info.encoderField;
    const encoder = field ? ctx.table.encoderOf((cmd as unknown as Record<string, number>)[field]) : null;
    if (encoder) {
      encoder.error ??= `${cmd.op}: ${message}`;
      if (kind) {
        const id = (cmd as unknown as CreatingOp).id;
        ctx.table.invalidate(id, kind, message, encoder);
        encoder.passes.push(id);
      }
      return null;
    }
    if (kind) ctx.table.invalidate((cmd as unknown as CreatingOp).id, kind, message);
    if (error instanceof ReplayError) return { type: error.type, message };
    // dawn.node throws TypeError for malformed descriptors; a browser would too, synchronously.
    return { type: 'validation', message: `${cmd.op}: ${message}` };
  }
}
