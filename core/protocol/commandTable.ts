/**
 * The one command table: every GPU command a job sends, with its opcode and its
 * fields in wire order. The job-side encoder, the service-side decoder (which is
 * also the validator) and the `Command` type are all made from it
 * (core/protocol/commandCodec.ts), as dawn_wire is made from dawn.json: adding a
 * command is one entry here and one replay handler (core/executor/replay.ts).
 *
 * Object ids are allocated by the client (per connection, from 1, across all of
 * the job's devices) so calls pipeline without round trips; commands that await
 * carry a request id `rid` and get exactly one reply. Bytes travel in the
 * frame's data section or a bulk file: `data` says where (see DataRef).
 *
 * Portable: no Node APIs.
 */
import { z } from 'zod';
import {
  resourceEntry, samplerDescriptor, texelCopyBuffer, texelCopyLayout, texelCopyTexture, textureDescriptor, textureViewDescriptor, triple,
} from './textureSchemas.js';
import { described } from './objectRefs.js';

/**
 * Where a command's bytes are: `[offset, length]` into the batch's data section,
 * a file of the bulk channel (see core/platform/bulkDir.ts) named `<jobId>-<n>`,
 * or `length` bytes at offset `scratch` of the job's scratch file there (core/client/bulkScratch.ts).
 */
export type DataRef = [number, number] | { file: string; length: number } | { scratch: number; length: number };

/** The shape of a bulk file's name: `<jobId>-<n>`. */
export const BULK_FILE_NAME = /^[A-Za-z0-9]+-[A-Za-z0-9]+-\d+$/;

/**
 * How a field crosses the wire (each a whole number of u32 words):
 * - `id`: an object id, u32 ≥ 1. `id?`: 0 means absent. `idOrNull`: 0 means null. `layout`: 0 means 'auto'.
 * - `u32`: any u32. `u32?`: a presence word, then the value.
 * - `u64`: two words (low, high), at most 2^53 − 1. `u64?`: both words 0xffffffff when absent.
 * - `rid`: a request id, u32 ≥ 1; `rid?`: 0 means absent.
 * - `bool?`: 0 absent, 1 false, 2 true.
 * - `string`/`string?`: a byte length (0xffffffff: absent), then UTF-8, padded to a word; at most `max` UTF-16 units.
 * - `enum`/`enum?`: an index into `values` (0xffffffff: absent).
 * - `ids`, `idsOrNull`: a count (at most `max`), then ids (0 means null in `idsOrNull`).
 * - `u32s?`: a count (0: absent), then values.
 * - `data`: a DataRef, as a tag (0: data section, 1: bulk file, 2: scratch file) and its fields.
 * - `bindings`: bind group entries `{binding, buffer, offset?, size?}` (a count, then each).
 * - `timestampWrites?`: a query set id (0: absent), then two `u32?` indices.
 * - `json`/`json?`: a cold descriptor (layout entries, limits, constants) as a JSON string, checked by its schema.
 */
export type FieldSpec =
  | { kind: 'id' | 'id?' | 'idOrNull' | 'layout' | 'u32' | 'u32?' | 'u64' | 'u64?' | 'rid' | 'rid?' | 'bool?' | 'data' | 'bindings' | 'timestampWrites?' }
  | { kind: 'string' | 'string?'; max: number }
  | { kind: 'enum' | 'enum?'; values: readonly string[] }
  | { kind: 'ids' | 'idsOrNull' | 'u32s?'; max: number }
  | { kind: 'json' | 'json?'; schema: z.ZodType };

/** A field spec that also carries the TypeScript type of its decoded value. */
type Field<T> = FieldSpec & { readonly __type?: [T] };

const field = <T>(spec: FieldSpec): Field<T> => spec as Field<T>;

/** The field kinds, with the value each decodes to. */
const f = {
  id: field<number>({ kind: 'id' }),
  optId: field<number | undefined>({ kind: 'id?' }),
  idOrNull: field<number | null>({ kind: 'idOrNull' }),
  layout: field<number | 'auto'>({ kind: 'layout' }),
  u32: field<number>({ kind: 'u32' }),
  optU32: field<number | undefined>({ kind: 'u32?' }),
  u64: field<number>({ kind: 'u64' }),
  optU64: field<number | undefined>({ kind: 'u64?' }),
  rid: field<number>({ kind: 'rid' }),
  optRid: field<number | undefined>({ kind: 'rid?' }),
  optBool: field<boolean | undefined>({ kind: 'bool?' }),
  data: field<DataRef>({ kind: 'data' }),
  string: (max: number) => field<string>({ kind: 'string', max }),
  optString: (max: number) => field<string | undefined>({ kind: 'string?', max }),
  enum: <const V extends string>(values: readonly V[]) => field<V>({ kind: 'enum', values }),
  ids: (max: number) => field<number[]>({ kind: 'ids', max }),
  idsOrNull: (max: number) => field<(number | null)[]>({ kind: 'idsOrNull', max }),
  optU32s: (max: number) => field<number[] | undefined>({ kind: 'u32s?', max }),
  bindings: field<{ binding: number; buffer: number; offset?: number; size?: number }[]>({ kind: 'bindings' }),
  timestampWrites: field<{ querySet: number; beginningOfPassWriteIndex?: number; endOfPassWriteIndex?: number } | undefined>({ kind: 'timestampWrites?' }),
  json: <S extends z.ZodType>(schema: S) => field<z.infer<S>>({ kind: 'json', schema }),
  optJson: <S extends z.ZodType>(schema: S) => field<z.infer<S> | undefined>({ kind: 'json?', schema }),
};

/** Bind group entries: at most this many per bind group (and per layout). */
export const MAX_BINDINGS = 4096;
const label = f.optString(1024);

const bindGroupLayoutEntry = z.object({
  binding: z.number().int().nonnegative().max(0xffffffff),
  visibility: z.number().int().nonnegative().max(0xffffffff),
  buffer: z.object({
    type: z.enum(['uniform', 'storage', 'read-only-storage']).optional(),
    hasDynamicOffset: z.boolean().optional(),
    minBindingSize: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  }).optional(),
}).passthrough();

/**
 * Every command: its opcode (1-255, never reused for another meaning within a
 * protocol version) and its fields in wire order.
 */
export const COMMANDS = {
  /**
   * First command of each of the job's devices (ids allocated by the job, from 1;
   * 1 when absent): the features and limits it was created with (WebGPU's
   * defaults, raised where the job asked). The shared device has more; the
   * executor holds the job to these where Dawn would not. Commands after it are
   * this device's.
   */
  configureDevice: {
    code: 1,
    fields: {
      device: f.optId,
      features: f.json(z.array(z.string().max(128)).max(256)),
      limits: f.json(z.record(z.string().max(128), z.number())),
    },
  },
  /** Commands after this one are device `device`'s (until the next useDevice or configureDevice). */
  useDevice: { code: 2, fields: { device: f.id } },
  createBuffer: { code: 3, fields: { id: f.id, size: f.u64, usage: f.u32, mappedAtCreation: f.optBool, label } },
  destroy: { code: 4, fields: { id: f.id } },
  /** The job dropped its last reference to `id` (its garbage collector ran): free it as a browser would. */
  release: { code: 5, fields: { id: f.id } },
  /**
   * The job's framework put buffer `id` back in its own pool: its contents are dead, the job keeps the
   * buffer and will use it again. Its memory may go back to the lane meanwhile; the buffer's next use gets
   * zeroed memory (core/executor/discard.ts). A hint: ignored where it cannot apply (mapped, recorded).
   */
  discard: { code: 6, fields: { id: f.id } },
  writeBuffer: { code: 7, fields: { id: f.id, offset: f.u64, data: f.data } },
  /**
   * Replies `{offset, size}` with the mapped range's first DATA_CHUNK_BYTES; `readMapped` fetches the rest.
   * With `ring`, those bytes go to that offset of the job's scratch ring instead (core/executor/ringReadback.ts)
   * and the reply, `{offset, size, ring}`, carries none.
   */
  mapAsync: { code: 8, fields: { rid: f.rid, id: f.id, mode: f.u32, offset: f.u64, size: f.optU64, ring: f.optU64 } },
  /** More of a range mapped for reading: replies with bytes [offset, offset + size) of the buffer (or puts them at `ring`, as mapAsync). */
  readMapped: { code: 9, fields: { rid: f.rid, id: f.id, offset: f.u64, size: f.u64, ring: f.optU64 } },
  /** What the job wrote into a write-mapped range (or one mapped at creation), sent before its unmap. */
  writeMapped: { code: 10, fields: { id: f.id, offset: f.u64, data: f.data } },
  unmap: { code: 11, fields: { id: f.id } },
  createShaderModule: { code: 12, fields: { id: f.id, code: f.string(16 * 1024 * 1024), label } },
  compilationInfo: { code: 13, fields: { rid: f.rid, id: f.id } },
  createBindGroupLayout: { code: 14, fields: { id: f.id, entries: f.json(z.array(bindGroupLayoutEntry).max(MAX_BINDINGS)), label } },
  createPipelineLayout: { code: 15, fields: { id: f.id, bindGroupLayouts: f.idsOrNull(64), label, immediateSize: f.optU32 } },
  createComputePipeline: {
    code: 16,
    fields: {
      id: f.id, rid: f.optRid, layout: f.layout, module: f.id, entryPoint: f.optString(1024),
      constants: f.optJson(z.record(z.string(), z.number())), label,
    },
  },
  getBindGroupLayout: { code: 17, fields: { id: f.id, pipeline: f.id, index: f.u32 } },
  createBindGroup: { code: 18, fields: { id: f.id, layout: f.id, label, entries: f.bindings } },
  createQuerySet: { code: 19, fields: { id: f.id, type: f.enum(['timestamp', 'occlusion']), count: f.u32, label } },
  createCommandEncoder: { code: 20, fields: { id: f.id, label } },
  beginComputePass: { code: 21, fields: { id: f.id, encoder: f.id, timestampWrites: f.timestampWrites, label } },
  setPipeline: { code: 22, fields: { pass: f.id, pipeline: f.id } },
  setBindGroup: { code: 23, fields: { pass: f.id, index: f.u32, bindGroup: f.idOrNull, dynamicOffsets: f.optU32s(64) } },
  dispatch: { code: 24, fields: { pass: f.id, x: f.u32, y: f.u32, z: f.u32 } },
  dispatchIndirect: { code: 25, fields: { pass: f.id, buffer: f.id, offset: f.u64 } },
  endPass: { code: 26, fields: { pass: f.id } },
  debugMarker: { code: 27, fields: { target: f.id, kind: f.enum(['push', 'pop', 'insert']), label } },
  copyBufferToBuffer: { code: 28, fields: { encoder: f.id, src: f.id, srcOffset: f.u64, dst: f.id, dstOffset: f.u64, size: f.u64 } },
  clearBuffer: { code: 29, fields: { encoder: f.id, buffer: f.id, offset: f.optU64, size: f.optU64 } },
  resolveQuerySet: { code: 30, fields: { encoder: f.id, querySet: f.id, first: f.u32, count: f.u32, dst: f.id, dstOffset: f.u64 } },
  finish: { code: 31, fields: { encoder: f.id, id: f.id, label } },
  submit: { code: 32, fields: { commandBuffers: f.ids(65536) } },
  workDone: { code: 33, fields: { rid: f.rid } },
  pushErrorScope: { code: 34, fields: { filter: f.enum(['validation', 'out-of-memory', 'internal']) } },
  popErrorScope: { code: 35, fields: { rid: f.rid } },
  setLabel: { code: 36, fields: { id: f.id, label: f.string(1024) } },
  /** `device.destroy()` of the current device: its buffers and query sets go now; the job sends nothing more for it. */
  destroyDevice: { code: 37, fields: {} },
  /** Job SDK: an iteration starts here and must wait for its lane. */
  iterationBegin: { code: 38, fields: {} },
  /** Job SDK: the iteration ends once its GPU work is done. */
  iterationEnd: { code: 39, fields: { rid: f.optRid } },
  /** A compute pass's immediate data (bytes in `data`) at byte `offset` of its range, for the dispatches after it. */
  setImmediates: { code: 40, fields: { pass: f.id, offset: f.u32, data: f.data } },
  // Textures and samplers (descriptors as JSON: core/protocol/textureSchemas.ts). `destroy` and `release` serve them too.
  createTexture: { code: 41, fields: { id: f.id, descriptor: f.json(textureDescriptor), label } },
  createView: { code: 42, fields: { id: f.id, texture: f.id, descriptor: f.optJson(textureViewDescriptor), label } },
  createSampler: { code: 43, fields: { id: f.id, descriptor: f.optJson(samplerDescriptor), label } },
  /** `queue.writeTexture`: the job's bytes in `data`, laid out as `layout` says (its offset into them). */
  writeTexture: { code: 44, fields: { destination: f.json(texelCopyTexture), data: f.data, layout: f.json(texelCopyLayout), size: f.json(triple) } },
  copyBufferToTexture: { code: 45, fields: { encoder: f.id, source: f.json(texelCopyBuffer), destination: f.json(texelCopyTexture), size: f.json(triple) } },
  copyTextureToBuffer: { code: 46, fields: { encoder: f.id, source: f.json(texelCopyTexture), destination: f.json(texelCopyBuffer), size: f.json(triple) } },
  copyTextureToTexture: { code: 47, fields: { encoder: f.id, source: f.json(texelCopyTexture), destination: f.json(texelCopyTexture), size: f.json(triple) } },
  /** A bind group with texture-view or sampler entries (one of buffers only is `createBindGroup`). */
  createBindGroupOfResources: { code: 48, fields: { id: f.id, layout: f.id, label, entries: f.json(z.array(resourceEntry).max(MAX_BINDINGS)) } },
  // Render (descriptors as JSON naming the job's objects: core/protocol/objectRefs.ts). `pass` is a render pass or a render bundle encoder.
  createRenderPipeline: { code: 49, fields: { id: f.id, rid: f.optRid, descriptor: f.json(described), label } },
  renderPipelineBindGroupLayout: { code: 50, fields: { id: f.id, pipeline: f.id, index: f.u32 } },
  beginRenderPass: { code: 51, fields: { id: f.id, encoder: f.id, descriptor: f.json(described), label } },
  createRenderBundleEncoder: { code: 52, fields: { id: f.id, descriptor: f.json(described), label } },
  finishRenderBundle: { code: 53, fields: { encoder: f.id, id: f.id, label } },
  renderSetPipeline: { code: 54, fields: { pass: f.id, pipeline: f.id } },
  renderSetBindGroup: { code: 55, fields: { pass: f.id, index: f.u32, bindGroup: f.idOrNull, dynamicOffsets: f.optU32s(64) } },
  setVertexBuffer: { code: 56, fields: { pass: f.id, slot: f.u32, buffer: f.idOrNull, offset: f.u64, size: f.optU64 } },
  setIndexBuffer: { code: 57, fields: { pass: f.id, buffer: f.id, format: f.enum(['uint16', 'uint32']), offset: f.u64, size: f.optU64 } },
  draw: { code: 58, fields: { pass: f.id, vertexCount: f.u32, instanceCount: f.u32, firstVertex: f.u32, firstInstance: f.u32 } },
  /** `baseVertex` is a signed 32-bit integer, sent as its two's-complement bits. */
  drawIndexed: { code: 59, fields: { pass: f.id, indexCount: f.u32, instanceCount: f.u32, firstIndex: f.u32, baseVertex: f.u32, firstInstance: f.u32 } },
  drawIndirect: { code: 60, fields: { pass: f.id, buffer: f.id, offset: f.u64, indexed: f.optBool } },
  /** A render pass's fixed state: `kind` names the call, `values` its numbers (floats, hence JSON). */
  setPassState: {
    code: 61,
    fields: { pass: f.id, kind: f.enum(['viewport', 'scissorRect', 'blendConstant', 'stencilReference']), values: f.json(z.array(z.number()).max(6)) },
  },
  occlusionQuery: { code: 62, fields: { pass: f.id, index: f.optU32 } },
  executeBundles: { code: 63, fields: { pass: f.id, bundles: f.ids(65536) } },
  endRenderPass: { code: 64, fields: { pass: f.id } },
  /** A render pass's or bundle's immediate data (bytes in `data`) at byte `offset` of its range, for the draws after it. */
  renderSetImmediates: { code: 65, fields: { pass: f.id, offset: f.u32, data: f.data } },
} as const satisfies Record<string, { code: number; fields: Record<string, Field<unknown>> }>;

type Table = typeof COMMANDS;
export type CommandOp = keyof Table;
type ValueOf<F> = F extends Field<infer T> ? T : never;
type Fields<K extends CommandOp> = Table[K]['fields'];
type RequiredKeys<K extends CommandOp> = { [N in keyof Fields<K>]: undefined extends ValueOf<Fields<K>[N]> ? never : N }[keyof Fields<K>];
type OptionalKeys<K extends CommandOp> = Exclude<keyof Fields<K>, RequiredKeys<K>>;
type Flat<T> = { [K in keyof T]: T[K] };

/** The command of one op, e.g. `CommandOf<'createBuffer'>`: its fields as decoded (absent optional ones undefined). */
export type CommandOf<K extends CommandOp> = Flat<
  { op: K } & { [N in RequiredKeys<K>]: ValueOf<Fields<K>[N]> } & { [N in OptionalKeys<K>]?: ValueOf<Fields<K>[N]> }
>;

/** Every command, discriminated by `op`. */
export type Command = { [K in CommandOp]: CommandOf<K> }[CommandOp];

/** The ops that await a reply: those with a request id. */
export const REQUEST_OPS: ReadonlySet<CommandOp> = new Set(
  (Object.keys(COMMANDS) as CommandOp[]).filter((op) => 'rid' in COMMANDS[op].fields),
);
