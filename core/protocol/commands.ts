/**
 * The GPU commands a job sends in a batch, defined once for the client that
 * records them and the executor that replays them. Object ids are allocated by
 * the client (per connection, from 1, across all of the job's devices), so
 * calls pipeline without round trips;
 * commands that await carry a request id `rid` and get exactly one reply.
 * Bytes travel in the frame's payload: `data: [offset, length]` points into it.
 */
import { z } from 'zod';
import { compileFastCheck } from './fastCheck.js';

const id = z.number().int().positive();
const u64 = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const u32 = z.number().int().nonnegative().max(0xffffffff);
const label = z.string().max(1024).optional();
const rid = z.number().int().positive();
/**
 * Where a command's bytes are: `[offset, length]` into the frame's payload, or a
 * file of the bulk channel (see core/platform/bulkDir.ts) named `<jobId>-<n>`.
 */
const dataRef = z.union([
  z.tuple([u64, u64]),
  z.object({ file: z.string().regex(/^[A-Za-z0-9]+-[A-Za-z0-9]+-\d+$/), length: u64 }),
]);
export type DataRef = z.infer<typeof dataRef>;

/**
 * Largest piece of buffer data in one command or reply. Bigger uploads, mapped
 * writes and mapped reads travel as several pieces, so no frame nears
 * MAX_FRAME_BYTES however large the buffer.
 */
export const DATA_CHUNK_BYTES = 32 * 1024 * 1024;

const bindGroupLayoutEntry = z.object({
  binding: u32,
  visibility: u32,
  buffer: z.object({
    type: z.enum(['uniform', 'storage', 'read-only-storage']).optional(),
    hasDynamicOffset: z.boolean().optional(),
    minBindingSize: u64.optional(),
  }).optional(),
}).passthrough();

const timestampWrites = z.object({
  querySet: id,
  beginningOfPassWriteIndex: u32.optional(),
  endOfPassWriteIndex: u32.optional(),
});

/** Every command, discriminated by `op`. */
export const commandSchema = z.discriminatedUnion('op', [
  /**
   * First command of each of the job's devices (ids allocated by the job, from 1;
   * 1 when absent): the features and limits it was created with (WebGPU's
   * defaults, raised where the job asked). The shared device has more; the
   * executor holds the job to these where Dawn would not. Commands after it are
   * this device's.
   */
  z.object({
    op: z.literal('configureDevice'),
    device: id.max(0xffffffff).optional(),
    features: z.array(z.string().max(128)).max(256),
    limits: z.record(z.string().max(128), z.number()),
  }),
  /** Commands after this one are device `device`'s (until the next useDevice or configureDevice). */
  z.object({ op: z.literal('useDevice'), device: id.max(0xffffffff) }),
  z.object({ op: z.literal('createBuffer'), id, size: u64, usage: u32, mappedAtCreation: z.boolean().optional(), label }),
  z.object({ op: z.literal('destroy'), id }),
  /** The job dropped its last reference to `id` (its garbage collector ran): free it as a browser would. */
  z.object({ op: z.literal('release'), id }),
  /**
   * The job's framework put buffer `id` back in its own pool: its contents are dead, the job keeps the
   * buffer and will use it again. Its memory may go back to the lane meanwhile; the buffer's next use gets
   * zeroed memory (core/executor/discard.ts). A hint: ignored where it cannot apply (mapped, recorded).
   */
  z.object({ op: z.literal('discard'), id }),
  z.object({ op: z.literal('writeBuffer'), id, offset: u64, data: dataRef }),
  /** Replies `{offset, size}` with the mapped range's first DATA_CHUNK_BYTES; `readMapped` fetches the rest. */
  z.object({ op: z.literal('mapAsync'), rid, id, mode: u32, offset: u64, size: u64.optional() }),
  /** More of a range mapped for reading: replies with bytes [offset, offset + size) of the buffer. */
  z.object({ op: z.literal('readMapped'), rid, id, offset: u64, size: u64 }),
  /** What the job wrote into a write-mapped range (or one mapped at creation), sent before its unmap. */
  z.object({ op: z.literal('writeMapped'), id, offset: u64, data: dataRef }),
  z.object({ op: z.literal('unmap'), id }),
  z.object({ op: z.literal('createShaderModule'), id, code: z.string().max(16 * 1024 * 1024), label }),
  z.object({ op: z.literal('compilationInfo'), rid, id }),
  z.object({ op: z.literal('createBindGroupLayout'), id, entries: z.array(bindGroupLayoutEntry).max(4096), label }),
  z.object({ op: z.literal('createPipelineLayout'), id, bindGroupLayouts: z.array(id.nullable()).max(64), label }),
  z.object({
    op: z.literal('createComputePipeline'), id, rid: rid.optional(),
    layout: z.union([id, z.literal('auto')]),
    module: id, entryPoint: z.string().max(1024).optional(),
    constants: z.record(z.string(), z.number()).optional(), label,
  }),
  z.object({ op: z.literal('getBindGroupLayout'), id, pipeline: id, index: u32 }),
  z.object({
    op: z.literal('createBindGroup'), id, layout: id, label,
    entries: z.array(z.object({ binding: u32, buffer: id, offset: u64.optional(), size: u64.optional() })).max(4096),
  }),
  z.object({ op: z.literal('createQuerySet'), id, type: z.enum(['timestamp', 'occlusion']), count: u32, label }),
  z.object({ op: z.literal('createCommandEncoder'), id, label }),
  z.object({ op: z.literal('beginComputePass'), id, encoder: id, timestampWrites: timestampWrites.optional(), label }),
  z.object({ op: z.literal('setPipeline'), pass: id, pipeline: id }),
  z.object({ op: z.literal('setBindGroup'), pass: id, index: u32, bindGroup: id.nullable(), dynamicOffsets: z.array(u32).max(64).optional() }),
  z.object({ op: z.literal('dispatch'), pass: id, x: u32, y: u32, z: u32 }),
  z.object({ op: z.literal('dispatchIndirect'), pass: id, buffer: id, offset: u64 }),
  z.object({ op: z.literal('endPass'), pass: id }),
  z.object({ op: z.literal('debugMarker'), target: id, kind: z.enum(['push', 'pop', 'insert']), label: z.string().max(1024).optional() }),
  z.object({ op: z.literal('copyBufferToBuffer'), encoder: id, src: id, srcOffset: u64, dst: id, dstOffset: u64, size: u64 }),
  z.object({ op: z.literal('clearBuffer'), encoder: id, buffer: id, offset: u64.optional(), size: u64.optional() }),
  z.object({ op: z.literal('resolveQuerySet'), encoder: id, querySet: id, first: u32, count: u32, dst: id, dstOffset: u64 }),
  z.object({ op: z.literal('finish'), encoder: id, id, label }),
  z.object({ op: z.literal('submit'), commandBuffers: z.array(id).max(65536) }),
  z.object({ op: z.literal('workDone'), rid }),
  z.object({ op: z.literal('pushErrorScope'), filter: z.enum(['validation', 'out-of-memory', 'internal']) }),
  z.object({ op: z.literal('popErrorScope'), rid }),
  z.object({ op: z.literal('setLabel'), id, label: z.string().max(1024) }),
  /** `device.destroy()` of the current device: its buffers and query sets go now; the job sends nothing more for it. */
  z.object({ op: z.literal('destroyDevice') }),
  /** Job SDK: an iteration starts here and must wait for its lane. */
  z.object({ op: z.literal('iterationBegin') }),
  /** Job SDK: the iteration ends once its GPU work is done. */
  z.object({ op: z.literal('iterationEnd'), rid: rid.optional() }),
]);

export type Command = z.infer<typeof commandSchema>;

/**
 * True only for a command `commandSchema` accepts as it is: the executor's fast
 * path (a few hundred ns instead of a few µs a command). False means "ask zod".
 */
export const isWellFormedCommand = compileFastCheck(commandSchema) ?? (() => false);
export type CommandOp = Command['op'];
/** The command of one op, e.g. `CommandOf<'createBuffer'>`. */
export type CommandOf<K extends CommandOp> = Extract<Command, { op: K }>;

/**
 * Whether `value` is a request id as commands carry it (a positive safe integer). Only those are
 * answered, and counted as awaiting an answer: a reply to `Infinity` or `0.5` would reach no caller.
 */
export function isRequestId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

/** A batch: commands in order, their bytes in the frame's payload. */
export const batchSchema = z.object({ t: z.literal('batch'), cmds: z.array(z.unknown()).max(1_000_000) });

/** The WebGPU error types as they cross the wire. */
export type GpuErrorType = 'validation' | 'out-of-memory' | 'internal';

/** A WebGPU error for a job: its class and message. */
export interface GpuErrorJson {
  type: GpuErrorType;
  message: string;
}
