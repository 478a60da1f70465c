/**
 * A session's object table: the job's ids mapped to real objects on the shared
 * device. Ids live in one session only, so a job can never name another job's
 * objects. An id whose creation failed on our side (out of memory, an unknown
 * reference) maps to an invalid entry: using it is a validation error, as using
 * an error object is in WebGPU.
 */
import type { BufferLease } from '../memory/memoryManager.js';

/** Raised while replaying a command: becomes a GPU error of the job, never a crash. */
export class ReplayError extends Error {
  constructor(message: string, readonly type: 'validation' | 'out-of-memory' = 'validation') {
    super(message);
  }
}

export interface BufferEntry {
  kind: 'buffer';
  obj: GPUBuffer;
  /** What the job asked for; the real buffer may be larger when it comes from a lane's pool. */
  sizeBytes: number;
  usage: number;
  /** Null for buffers the ledger does not hold (invalid descriptors Dawn rejected). */
  lease: BufferLease | null;
  destroyed: boolean;
  /** The mapped range's bytes on this side, from the one getMappedRange call Dawn allows. */
  mapped: { offset: number; range: ArrayBuffer } | null;
  mappedAtCreation: boolean;
}

/** Buffers an encoder or command buffer uses, checked at submit (a destroyed one fails it). */
export type UsedBuffers = Set<BufferEntry>;

export type Entry =
  | BufferEntry
  | { kind: 'shaderModule'; obj: GPUShaderModule }
  | { kind: 'bindGroupLayout'; obj: GPUBindGroupLayout }
  | { kind: 'pipelineLayout'; obj: GPUPipelineLayout }
  | { kind: 'computePipeline'; obj: GPUComputePipeline | null; pending?: Promise<void> }
  | { kind: 'bindGroup'; obj: GPUBindGroup; buffers: BufferEntry[] }
  | { kind: 'querySet'; obj: GPUQuerySet }
  | { kind: 'commandEncoder'; obj: GPUCommandEncoder; used: UsedBuffers }
  | { kind: 'computePass'; obj: GPUComputePassEncoder; encoder: { used: UsedBuffers } }
  | { kind: 'commandBuffer'; obj: GPUCommandBuffer; used: UsedBuffers }
  | { kind: 'invalid'; of: EntryKind; message: string };

export type EntryKind = 'buffer' | 'shaderModule' | 'bindGroupLayout' | 'pipelineLayout' | 'computePipeline' | 'bindGroup' | 'querySet' | 'commandEncoder' | 'computePass' | 'commandBuffer';
type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

const NAMES: Record<EntryKind, string> = {
  buffer: 'GPUBuffer', shaderModule: 'GPUShaderModule', bindGroupLayout: 'GPUBindGroupLayout',
  pipelineLayout: 'GPUPipelineLayout', computePipeline: 'GPUComputePipeline', bindGroup: 'GPUBindGroup',
  querySet: 'GPUQuerySet', commandEncoder: 'GPUCommandEncoder', computePass: 'GPUComputePassEncoder',
  commandBuffer: 'GPUCommandBuffer',
};

export class ObjectTable {
  private readonly entries = new Map<number, Entry>();

  get size(): number {
    return this.entries.size;
  }

  /** Registers a created object. Reusing a live id is a protocol violation, reported as a validation error. */
  set(id: number, entry: Entry): void {
    this.entries.set(id, entry);
  }

  has(id: number): boolean {
    return this.entries.has(id);
  }

  /** Marks `id` as a failed creation of `kind`. */
  invalidate(id: number, kind: EntryKind, message: string): void {
    this.entries.set(id, { kind: 'invalid', of: kind, message });
  }

  /** The live entry of `id` and `kind`, or a ReplayError saying what is wrong with it. */
  get<K extends EntryKind>(id: number, kind: K): EntryOf<K> {
    const entry = this.entries.get(id);
    if (!entry) throw new ReplayError(`${NAMES[kind]} id ${id} does not exist in this job (never created, or released)`);
    if (entry.kind === 'invalid') {
      throw new ReplayError(`invalid ${NAMES[entry.of]} (id ${id}) used: ${entry.message}`);
    }
    if (entry.kind !== kind) throw new ReplayError(`id ${id} is a ${NAMES[(entry as { kind: EntryKind }).kind]}, not a ${NAMES[kind]}`);
    return entry as EntryOf<K>;
  }

  /** Any entry of `id`, for labels and destroy. */
  peek(id: number): Entry | undefined {
    return this.entries.get(id);
  }

  delete(id: number): void {
    this.entries.delete(id);
  }

  values(): IterableIterator<Entry> {
    return this.entries.values();
  }

  clear(): void {
    this.entries.clear();
  }
}
