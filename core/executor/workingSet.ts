/**
 * Which of a job's buffers each iteration touches, and which of them it needs
 * as they were before it began (live-in: weights, optimizer state) rather than
 * overwriting them first. The service learned persistent vs ephemeral from
 * allocation in Salus's forked TensorFlow; frameworks that pool their buffers
 * (TF.js, ONNX Runtime Web) never free them, so this is measured from use.
 *
 * A window runs from one iteration's start to the next one's, so a
 * readback after an iteration's sync point belongs to it. Accesses are applied
 * in the order the GPU performs them: queue writes and maps at once, encoded
 * commands at their submit. A buffer is live-in when some byte of it is read
 * before the window wrote that byte, where only writes that provably happen
 * count as writing: `writeBuffer`, a copy's destination, `clearBuffer`, a query
 * resolve (each checked against the rules that would make WebGPU drop it),
 * never a dispatch (a shader's writes need not cover what it is bound to).
 * Texture copies read or touch their buffer; render passes and bundles read
 * their vertex, index and indirect buffers and every buffer they bind.
 * A buffer created inside the window is never live-in (it started as zeros).
 * Any GPU error in the window taints it: every touched buffer counts as live-in.
 */
import { COMMANDS, type Command, type CommandOf, type CommandOp } from '../protocol/commands.js';
import type { BufferEntry, ObjectTable } from './objects.js';
import { moduleAccess, type ModuleAccess } from './wgslAccess.js';

const MAP_READ = 0x1;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const QUERY_RESOLVE = 0x200;

/** One access in GPU order: `read` or covering `write` of [start, end); `touch` writes without proof of what. */
interface Access {
  buffer: BufferEntry;
  kind: 'read' | 'write' | 'touch';
  start: number;
  end: number;
}

/** What one buffer went through in the window. */
interface BufferUse {
  /** Sorted, disjoint byte ranges written so far. */
  written: Array<[number, number]>;
  liveIn: boolean;
}

/** A finished window's figures, in bytes of real GPU buffers. */
export interface WorkingSetStats {
  /** Bytes of the job's buffers the window touched. */
  workingSetBytes: number;
  /** Of those, buffers read before written (or touched in a tainted window) that existed before it. */
  liveInBytes: number;
  /** Touched buffers that existed before the window and that it provably overwrote whole before reading any byte: their old contents were dead. */
  writtenFirstBytes: number;
  /** Touched buffers that existed before the window, never read what it had not written, yet were not provably overwritten whole (e.g. a shader's output). */
  unreadBytes: number;
  /** Touched buffers created inside the window. */
  createdBytes: number;
  /** Whether a GPU error in the window made every touched buffer count as live-in. */
  tainted: boolean;
}

/** A buffer range as the job bound it. */
interface BoundBuffer {
  binding: number;
  buffer: BufferEntry;
  offset: number;
  size: number | undefined;
}

interface PassState {
  encoder: number;
  pipeline: number | null;
  groups: Map<number, { bindGroup: number; dynamic: boolean }>;
  /**
   * The tracker's generation when a dispatch last recorded this state (-1: not since it changed). A dispatch
   * of the same pipeline and bind groups records the same accesses again, which changes nothing: skipped.
   */
  recordedAt: number;
}

/** The accesses one bind group's buffers make at one index under one pipeline, made once per combination. */
interface GroupAccesses {
  pipeline: number | null;
  index: number;
  dynamic: boolean;
  generation: number;
  accesses: Access[];
}

/** `id`'s buffer when it is one and not destroyed. */
function liveBuffer(table: ObjectTable, id: number): BufferEntry | null {
  const entry = table.peek(id);
  return entry?.kind === 'buffer' && !entry.destroyed ? entry : null;
}

const realBytes = (buffer: BufferEntry): number => buffer.lease?.realSizeBytes ?? 0;
const aligned = (...values: number[]): boolean => values.every((v) => v % 4 === 0);

/** Adds [start, end) to sorted disjoint ranges, in place (no array made when a range already covers it). */
function addRange(ranges: Array<[number, number]>, start: number, end: number): void {
  if (end <= start) return;
  // The first range that ends at or after `start`: ranges before it stay; from it on, those starting by `end` merge.
  let first = 0;
  while (first < ranges.length && ranges[first][1] < start) first++;
  let past = first;
  while (past < ranges.length && ranges[past][0] <= end) past++;
  if (past === first + 1 && ranges[first][0] <= start && end <= ranges[first][1]) return;
  if (past > first) {
    start = Math.min(start, ranges[first][0]);
    end = Math.max(end, ranges[past - 1][1]);
  }
  ranges.splice(first, past - first, [start, end]);
}

const covers = (ranges: Array<[number, number]>, start: number, end: number): boolean =>
  end <= start || ranges.some(([s, e]) => s <= start && end <= e);

const SET_PIPELINE = COMMANDS.setPipeline.code;
const SET_BIND_GROUP = COMMANDS.setBindGroup.code;
const DISPATCH = COMMANDS.dispatch.code;
const END_PASS = COMMANDS.endPass.code;

/** The ops WorkingSetTracker.observe handles (its switch's cases): the session calls it for these only (opFlags.ts). */
export const WORKING_SET_OPS: readonly CommandOp[] = [
  'setPipeline', 'setBindGroup', 'dispatch', 'endPass', 'createBuffer', 'createShaderModule', 'createComputePipeline',
  'createBindGroup', 'createBindGroupOfResources', 'beginComputePass', 'dispatchIndirect', 'copyBufferToBuffer', 'clearBuffer',
  'resolveQuerySet', 'copyBufferToTexture', 'copyTextureToBuffer', 'beginRenderPass', 'endRenderPass', 'setVertexBuffer',
  'setIndexBuffer', 'drawIndirect', 'renderSetBindGroup', 'finish', 'submit', 'writeBuffer', 'mapAsync', 'readMapped',
  'writeMapped', 'release', 'discard',
];

/** Tracks one session's accesses; see the file's comment for the rules. */
export class WorkingSetTracker {
  private readonly modules = new Map<number, string>();
  private readonly analyses = new Map<number, ModuleAccess>();
  private readonly pipelines = new Map<number, number>();
  private readonly bindGroups = new Map<number, BoundBuffer[]>();
  private readonly passes = new Map<number, PassState>();
  /** The pass passOf found last, and its id. */
  private lastPassId = 0;
  private lastPass: PassState | undefined;
  /** Each open render pass's command encoder. */
  private readonly renderPasses = new Map<number, number>();
  private readonly groupAccesses = new Map<number, GroupAccesses>();
  /**
   * Bumped whenever a pipeline or bind group is released: what was recorded or cached for its id may be stale.
   * Making one needs no bump: its id was new, or its old object's release bumped it already (replay refuses a live id).
   */
  private generation = 0;
  /** Recorded accesses of encoders, then of their command buffers, applied at submit. */
  private readonly pending = new Map<number, Access[]>();
  private uses = new Map<BufferEntry, BufferUse>();
  private created = new Set<BufferEntry>();
  private open = false;
  private tainted = false;
  /** The last finished window, or null before one finished. */
  last: WorkingSetStats | null = null;

  /** Ends the window before (if any) and starts one: called as a granted iteration begins. */
  beginWindow(): void {
    if (this.open) this.last = this.summary();
    this.open = true;
    this.tainted = false;
    this.uses = new Map();
    this.created = new Set();
  }

  /** A GPU error of the job's work: the open window's proofs of writing are void. */
  taint(): void {
    if (this.open) this.tainted = true;
  }

  /**
   * Records what `cmd` did, after it was replayed; `ok` is false when the replay
   * rejected it (then it did nothing). Reads the table for the objects it names.
   */
  observe(cmd: Command, code: number, table: ObjectTable, ok: boolean): void {
    // The commands a compute pass repeats most, found by opcode: reading `op` of commands of many shapes costs more
    // than the rest of their observation. They need no buffer of the table.
    switch (code) {
      case SET_PIPELINE: return this.observeSetPipeline(cmd as CommandOf<'setPipeline'>);
      case SET_BIND_GROUP: return this.observeSetBindGroup(cmd as CommandOf<'setBindGroup'>);
      case DISPATCH: return this.recordDispatch(cmd as CommandOf<'dispatch'>, null);
      case END_PASS:
        this.passes.delete((cmd as CommandOf<'endPass'>).pass);
        this.lastPassId = 0;
        return;
      default:
        return this.observeOther(cmd, table, ok);
    }
  }

  private observeSetPipeline(cmd: CommandOf<'setPipeline'>): void {
    const pass = this.passOf(cmd.pass);
    if (pass && pass.pipeline !== cmd.pipeline) {
      pass.pipeline = cmd.pipeline;
      pass.recordedAt = -1;
    }
  }

  private observeSetBindGroup(cmd: CommandOf<'setBindGroup'>): void {
    const pass = this.passOf(cmd.pass);
    if (!pass) return;
    const before = pass.groups.get(cmd.index);
    if (cmd.bindGroup === null) {
      if (before) pass.recordedAt = -1;
      pass.groups.delete(cmd.index);
      return;
    }
    const dynamic = (cmd.dynamicOffsets?.length ?? 0) > 0;
    if (before?.bindGroup === cmd.bindGroup && before.dynamic === dynamic) return;
    pass.groups.set(cmd.index, { bindGroup: cmd.bindGroup, dynamic });
    pass.recordedAt = -1;
  }

  private observeOther(cmd: Command, table: ObjectTable, ok: boolean): void {
    switch (cmd.op) {
      case 'createBuffer': {
        const entry = ok ? liveBuffer(table, cmd.id) : null;
        if (entry && this.open) this.created.add(entry);
        return;
      }
      case 'createShaderModule':
        this.modules.set(cmd.id, cmd.code);
        return;
      case 'createComputePipeline':
        this.pipelines.set(cmd.id, cmd.module);
        return;
      case 'createBindGroup': case 'createBindGroupOfResources': {
        if (!ok) return;
        const bound: BoundBuffer[] = [];
        for (const e of cmd.entries) {
          const entry = e.buffer === undefined ? null : liveBuffer(table, e.buffer);
          if (entry) bound.push({ binding: e.binding, buffer: entry, offset: e.offset ?? 0, size: e.size });
        }
        this.bindGroups.set(cmd.id, bound);
        return;
      }
      case 'beginComputePass':
        this.passes.set(cmd.id, { encoder: cmd.encoder, pipeline: null, groups: new Map(), recordedAt: -1 });
        this.lastPassId = 0;
        return;
      case 'dispatchIndirect':
        this.recordDispatch(cmd, table);
        return;
      case 'copyBufferToBuffer': {
        const src = liveBuffer(table, cmd.src);
        const dst = liveBuffer(table, cmd.dst);
        if (!src || !dst) return;
        const valid = (src.usage & COPY_SRC) !== 0 && (dst.usage & COPY_DST) !== 0 && src !== dst && aligned(cmd.srcOffset, cmd.dstOffset, cmd.size);
        this.record(cmd.encoder, { buffer: src, kind: 'read', start: cmd.srcOffset, end: cmd.srcOffset + cmd.size });
        this.record(cmd.encoder, { buffer: dst, kind: valid ? 'write' : 'touch', start: cmd.dstOffset, end: cmd.dstOffset + cmd.size });
        return;
      }
      case 'clearBuffer': {
        const target = liveBuffer(table, cmd.buffer);
        if (!target) return;
        const offset = cmd.offset ?? 0;
        const size = cmd.size ?? Math.max(0, target.sizeBytes - offset);
        const valid = (target.usage & COPY_DST) !== 0 && aligned(offset, size);
        this.record(cmd.encoder, { buffer: target, kind: valid ? 'write' : 'touch', start: offset, end: offset + size });
        return;
      }
      case 'resolveQuerySet': {
        const dst = liveBuffer(table, cmd.dst);
        if (!dst) return;
        const valid = (dst.usage & QUERY_RESOLVE) !== 0 && cmd.dstOffset % 256 === 0;
        this.record(cmd.encoder, { buffer: dst, kind: valid ? 'write' : 'touch', start: cmd.dstOffset, end: cmd.dstOffset + cmd.count * 8 });
        return;
      }
      case 'copyBufferToTexture': {
        const src = liveBuffer(table, cmd.source.buffer);
        if (src) this.record(cmd.encoder, { buffer: src, kind: 'read', start: cmd.source.offset, end: src.sizeBytes });
        return;
      }
      case 'copyTextureToBuffer': {
        // Its rows need not cover the range: written without proof of what.
        const dst = liveBuffer(table, cmd.destination.buffer);
        if (dst) this.record(cmd.encoder, { buffer: dst, kind: 'touch', start: cmd.destination.offset, end: dst.sizeBytes });
        return;
      }
      case 'beginRenderPass':
        this.renderPasses.set(cmd.id, cmd.encoder);
        return;
      case 'endRenderPass':
        this.renderPasses.delete(cmd.pass);
        return;
      case 'setVertexBuffer': case 'setIndexBuffer': case 'drawIndirect': {
        const target = cmd.buffer === null ? null : liveBuffer(table, cmd.buffer);
        if (target) this.recordRender(cmd.pass, [{ buffer: target, kind: 'read', start: 0, end: target.sizeBytes }]);
        return;
      }
      case 'renderSetBindGroup': {
        // What a render pipeline's shaders do with a binding is not read from WGSL here: every bound range counts as read.
        const bound = cmd.bindGroup === null ? [] : this.bindGroups.get(cmd.bindGroup) ?? [];
        this.recordRender(cmd.pass, bound.map((b) => ({ buffer: b.buffer, kind: 'read' as const, start: 0, end: b.buffer.sizeBytes })));
        return;
      }
      case 'finish': {
        const accesses = this.pending.get(cmd.encoder);
        this.pending.delete(cmd.encoder);
        for (const [id, pass] of this.passes) if (pass.encoder === cmd.encoder) this.passes.delete(id);
        this.lastPassId = 0;
        if (ok && accesses) this.pending.set(cmd.id, accesses);
        return;
      }
      case 'submit':
        for (const id of cmd.commandBuffers) {
          if (ok) for (const access of this.pending.get(id) ?? []) this.apply(access);
          this.pending.delete(id);
        }
        return;
      case 'writeBuffer': {
        const target = liveBuffer(table, cmd.id);
        if (!target || !ok) return;
        const length = Array.isArray(cmd.data) ? cmd.data[1] : cmd.data.length;
        const valid = (target.usage & COPY_DST) !== 0 && aligned(cmd.offset, length) && target.obj.mapState === 'unmapped';
        this.apply({ buffer: target, kind: valid ? 'write' : 'touch', start: cmd.offset, end: cmd.offset + length });
        return;
      }
      case 'mapAsync': {
        const target = liveBuffer(table, cmd.id);
        // Mapping for writing shows the old contents too: both modes read.
        if (target && ok) this.apply({ buffer: target, kind: 'read', start: cmd.offset, end: cmd.offset + (cmd.size ?? Math.max(0, target.sizeBytes - cmd.offset)) });
        return;
      }
      case 'readMapped': {
        const target = liveBuffer(table, cmd.id);
        if (target && ok) this.apply({ buffer: target, kind: 'read', start: cmd.offset, end: cmd.offset + cmd.size });
        return;
      }
      case 'writeMapped': {
        const target = liveBuffer(table, cmd.id);
        if (!target || !ok) return;
        const length = Array.isArray(cmd.data) ? cmd.data[1] : cmd.data.length;
        // Lands at unmap, but only in a buffer that is mapped now and not for reading.
        const valid = target.obj.mapState === 'mapped' && (target.usage & MAP_READ) === 0;
        this.apply({ buffer: target, kind: valid ? 'write' : 'touch', start: cmd.offset, end: cmd.offset + length });
        return;
      }
      case 'release':
        this.forget(cmd.id);
        return;
      case 'discard': {
        // Its contents died: from here it is as good as a buffer created in the window (it comes back zeroed).
        const entry = ok ? liveBuffer(table, cmd.id) : null;
        if (entry?.discarded && this.open && !this.uses.has(entry)) this.created.add(entry);
        return;
      }
      default:
    }
  }

  private forget(id: number): void {
    this.generation++;
    this.groupAccesses.delete(id);
    this.modules.delete(id);
    this.analyses.delete(id);
    this.pipelines.delete(id);
    this.bindGroups.delete(id);
    this.pending.delete(id);
    this.passes.delete(id);
    this.lastPassId = 0;
  }

  /**
   * The open pass `id`'s state: a pass's commands come in runs, so the last one found is kept (every change to
   * `passes` forgets it; 0 is no id).
   */
  private passOf(id: number): PassState | undefined {
    if (id !== this.lastPassId) {
      this.lastPass = this.passes.get(id);
      this.lastPassId = id;
    }
    return this.lastPass;
  }

  private access(moduleId: number | undefined): ModuleAccess {
    if (moduleId === undefined) return null;
    if (!this.analyses.has(moduleId)) {
      const code = this.modules.get(moduleId);
      this.analyses.set(moduleId, code === undefined ? null : moduleAccess(code));
    }
    return this.analyses.get(moduleId)!;
  }

  /** `table` looks up a dispatchIndirect's buffer (null for a direct dispatch). */
  private recordDispatch(cmd: Extract<Command, { op: 'dispatch' | 'dispatchIndirect' }>, table: ObjectTable | null): void {
    const pass = this.passOf(cmd.pass);
    if (!pass) return;
    if (table && cmd.op === 'dispatchIndirect') {
      const indirect = liveBuffer(table, cmd.buffer);
      if (indirect) this.record(pass.encoder, { buffer: indirect, kind: 'read', start: cmd.offset, end: cmd.offset + 12 });
    }
    if (pass.recordedAt === this.generation) return;
    pass.recordedAt = this.generation;
    for (const [index, { bindGroup, dynamic }] of pass.groups) {
      for (const access of this.accessesOf(bindGroup, pass.pipeline, index, dynamic)) this.record(pass.encoder, access);
    }
  }

  /** What bind group `bindGroup`'s buffers do at `index` under `pipeline` (cached until a pipeline or group changes). */
  private accessesOf(bindGroup: number, pipeline: number | null, index: number, dynamic: boolean): Access[] {
    const cached = this.groupAccesses.get(bindGroup);
    if (cached && cached.pipeline === pipeline && cached.index === index && cached.dynamic === dynamic && cached.generation === this.generation) {
      return cached.accesses;
    }
    const access = this.access(pipeline === null ? undefined : this.pipelines.get(pipeline));
    const accesses: Access[] = [];
    for (const bound of this.bindGroups.get(bindGroup) ?? []) {
      const { buffer: target, offset } = bound;
      // Dynamic offsets move the range: then the whole buffer may be read.
      const [start, end] = dynamic ? [0, target.sizeBytes] : [offset, bound.size === undefined ? target.sizeBytes : offset + bound.size];
      const kind = access?.get(`${index}:${bound.binding}`) === 'write' ? 'touch' : 'read';
      accesses.push({ buffer: target, kind, start, end });
    }
    this.groupAccesses.set(bindGroup, { pipeline, index, dynamic, generation: this.generation, accesses });
    return accesses;
  }

  /** A render pass's accesses wait for its encoder's submit; a render bundle encoder's count now (its submits are not followed). */
  private recordRender(pass: number, accesses: Access[]): void {
    const encoder = this.renderPasses.get(pass);
    for (const access of accesses) {
      if (encoder === undefined) this.apply(access);
      else this.record(encoder, access);
    }
  }

  private record(encoder: number, access: Access): void {
    const list = this.pending.get(encoder);
    if (list) list.push(access);
    else this.pending.set(encoder, [access]);
  }

  private apply({ buffer, kind, start, end }: Access): void {
    if (!this.open) return;
    let use = this.uses.get(buffer);
    if (!use) {
      use = { written: [], liveIn: false };
      this.uses.set(buffer, use);
    }
    if (kind === 'write') addRange(use.written, start, end);
    else if (kind === 'read' && !use.liveIn && !covers(use.written, start, end)) use.liveIn = true;
  }

  private summary(): WorkingSetStats {
    const stats: WorkingSetStats = { workingSetBytes: 0, liveInBytes: 0, writtenFirstBytes: 0, unreadBytes: 0, createdBytes: 0, tainted: this.tainted };
    for (const [buffer, use] of this.uses) {
      const bytes = realBytes(buffer);
      stats.workingSetBytes += bytes;
      if (this.created.has(buffer)) stats.createdBytes += bytes;
      else if (use.liveIn || this.tainted) stats.liveInBytes += bytes;
      else if (covers(use.written, 0, buffer.sizeBytes)) stats.writtenFirstBytes += bytes;
      else stats.unreadBytes += bytes;
    }
    return stats;
  }
}
