/**
 * fast-check arbitraries for a hostile client of the service socket: raw bytes,
 * absurd length prefixes, truncated frames, envelopes of any shape, and command
 * batches that are well-formed but wrong — ids that do not exist or name
 * another kind of object, sizes, usages and offsets out of range, dynamic
 * offsets past a buffer's end, use after destroy — over a small id space, so
 * that they hit real objects.
 */
import fc from 'fast-check';
import { encodeFrame } from '../../core/protocol/frames.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

/** Ops that await a reply: their request ids are given in order when a batch is sent. */
const REQUEST_OPS = new Set(['mapAsync', 'readMapped', 'compilationInfo', 'workDone', 'popErrorScope']);

const id = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 1, max: 12 }) }, { weight: 1, arbitrary: fc.constantFrom(0, -1, 2 ** 31, 2 ** 53) });
const size = fc.oneof(fc.constantFrom(0, 4, 6, 256, 772, 1024, 4096, 2 ** 31, 2 ** 40, -4), fc.nat({ max: 70_000 }));
const offset = fc.oneof(fc.constantFrom(0, 4, 3, 256, 512, 768, 1024, 2 ** 32), fc.nat({ max: 5000 }));
const usage = fc.oneof(fc.constantFrom(0x88, 0x8c, 0x9, 0x6, 0x188, 0x48), fc.integer({ min: -1, max: 2047 }));
const data = (payloadBytes: number) => fc.tuple(fc.constantFrom(0, 4, 8, payloadBytes), fc.constantFrom(0, 4, 8, payloadBytes, payloadBytes + 4));

const SHADERS = [
  '@group(0) @binding(0) var<storage, read_write> o: array<u32>; @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) i: vec3u) { if (i.x < arrayLength(&o)) { o[i.x] = o[i.x] + 1u; } }',
  '@compute @workgroup_size(1) fn main() {}',
  'fn main( { not WGSL',
];

/** One command (request ids not yet given: `rid: 0`). */
function command(payloadBytes: number): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    fc.record({ op: fc.constant('createBuffer'), id, size, usage, mappedAtCreation: fc.boolean() }),
    fc.record({ op: fc.constant('writeBuffer'), id, offset, data: data(payloadBytes) }),
    fc.record({ op: fc.constantFrom('destroy', 'release', 'unmap'), id }),
    fc.record({ op: fc.constant('createShaderModule'), id, code: fc.constantFrom(...SHADERS) }),
    fc.record({ op: fc.constant('createComputePipeline'), id, layout: fc.oneof(fc.constant('auto'), id), module: id, entryPoint: fc.constant('main') }),
    fc.record({ op: fc.constant('getBindGroupLayout'), id, pipeline: id, index: fc.constantFrom(0, 1, 4) }),
    fc.record({
      op: fc.constant('createBindGroupLayout'), id,
      entries: fc.constant([{ binding: 0, visibility: 4, buffer: { type: 'storage', hasDynamicOffset: true } }]),
    }),
    fc.record({ op: fc.constant('createPipelineLayout'), id, bindGroupLayouts: fc.array(id, { maxLength: 2 }) }),
    fc.record({ op: fc.constant('createBindGroup'), id, layout: id, entries: fc.array(fc.record({ binding: fc.constantFrom(0, 1), buffer: id, offset, size: fc.option(size, { nil: undefined }) }), { maxLength: 2 }) }),
    fc.record({ op: fc.constant('createCommandEncoder'), id }),
    fc.record({ op: fc.constant('beginComputePass'), id, encoder: id }),
    fc.record({ op: fc.constant('setPipeline'), pass: id, pipeline: id }),
    fc.record({ op: fc.constant('setBindGroup'), pass: id, index: fc.constantFrom(0, 3), bindGroup: id, dynamicOffsets: fc.array(offset, { maxLength: 3 }) }),
    fc.record({ op: fc.constant('dispatch'), pass: id, x: fc.constantFrom(0, 1, 4, 65_536), y: fc.constant(1), z: fc.constant(1) }),
    fc.record({ op: fc.constant('dispatchIndirect'), pass: id, buffer: id, offset }),
    fc.record({ op: fc.constant('endPass'), pass: id }),
    fc.record({ op: fc.constant('copyBufferToBuffer'), encoder: id, src: id, srcOffset: offset, dst: id, dstOffset: offset, size }),
    fc.record({ op: fc.constant('clearBuffer'), encoder: id, buffer: id, offset: fc.option(offset, { nil: undefined }), size: fc.option(size, { nil: undefined }) }),
    fc.record({ op: fc.constant('finish'), encoder: id, id }),
    fc.record({ op: fc.constant('submit'), commandBuffers: fc.array(id, { maxLength: 2 }) }),
    fc.record({ op: fc.constant('mapAsync'), rid: fc.constant(0), id, mode: fc.constantFrom(1, 2, 3), offset, size: fc.option(size, { nil: undefined }) }),
    fc.record({ op: fc.constant('readMapped'), rid: fc.constant(0), id, offset, size }),
    fc.record({ op: fc.constant('writeMapped'), id, offset, data: data(payloadBytes) }),
    fc.record({ op: fc.constant('pushErrorScope'), filter: fc.constantFrom('validation', 'out-of-memory', 'internal') }),
    fc.record({ op: fc.constantFrom('popErrorScope', 'workDone'), rid: fc.constant(0) }),
    fc.record({ op: fc.constant('compilationInfo'), rid: fc.constant(0), id }),
    fc.record({ op: fc.constantFrom('iterationBegin', 'iterationEnd') }),
    // Malformed on purpose: the schema refuses them, each becomes the job's validation error.
    fc.constantFrom<Record<string, unknown>>({ op: 'createBuffer', id: -1 }, { op: 'nope' }, { id: 3 }, { op: 'dispatch', pass: 'x' }),
  );
}

/**
 * Real objects for the fuzzed commands to hit (ids 1–11), made inside an
 * iteration so the buffers come from the lane's pool (larger than asked for).
 */
export const SETUP_COMMANDS: readonly Record<string, unknown>[] = [
  { op: 'iterationBegin' },
  { op: 'createBuffer', id: 1, size: 1024, usage: 0x18c }, // STORAGE | INDIRECT | COPY_DST | COPY_SRC
  { op: 'createBuffer', id: 2, size: 772, usage: 0x8c },
  { op: 'createBuffer', id: 3, size: 256, usage: 0x9 }, // MAP_READ | COPY_DST
  { op: 'createShaderModule', id: 4, code: SHADERS[0] },
  { op: 'createComputePipeline', id: 5, layout: 'auto', module: 4, entryPoint: 'main' },
  { op: 'getBindGroupLayout', id: 6, pipeline: 5, index: 0 },
  { op: 'createBindGroupLayout', id: 7, entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage', hasDynamicOffset: true } }] },
  { op: 'createPipelineLayout', id: 8, bindGroupLayouts: [7] },
  { op: 'createComputePipeline', id: 9, layout: 8, module: 4, entryPoint: 'main' },
  { op: 'createBindGroup', id: 10, layout: 7, entries: [{ binding: 0, buffer: 2, offset: 0, size: 256 }] },
  { op: 'createCommandEncoder', id: 11 },
];

/** A batch: its commands and payload. Request ids are 0 until `numberRequests`. */
export const batchArbitrary = fc.integer({ min: 8, max: 24 }).chain((payloadBytes) =>
  fc.record({ payload: fc.uint8Array({ minLength: payloadBytes, maxLength: payloadBytes }), cmds: fc.array(command(payloadBytes), { minLength: 1, maxLength: 40 }) }));

/** Gives every request of `cmds` the next id from `next`; returns the ids given. */
export function numberRequests(cmds: Record<string, unknown>[], next: () => number): number[] {
  const rids: number[] = [];
  for (const cmd of cmds) {
    if (typeof cmd.op === 'string' && REQUEST_OPS.has(cmd.op) && cmd.rid === 0) {
      cmd.rid = next();
      rids.push(cmd.rid as number);
    }
  }
  return rids;
}

/** Bytes a stranger might send first: noise, absurd prefixes, a frame cut short. */
export const strangerBytesArbitrary: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }),
  fc.tuple(fc.nat(), fc.nat(), fc.uint8Array({ maxLength: 64 })).map(([body, header, rest]) => {
    const prefix = new Uint8Array(8);
    new DataView(prefix.buffer).setUint32(0, body >>> 0, true);
    new DataView(prefix.buffer).setUint32(4, header >>> 0, true);
    return concat([prefix, rest]);
  }),
  fc.tuple(fc.anything(), fc.nat()).map(([header, cut]) => {
    const whole = concat(encodeFrame(header ?? null));
    return whole.subarray(0, cut % (whole.byteLength + 1));
  }),
);

/** Envelopes after a job's hello: any value, or one of the real kinds with wrong fields. */
export const envelopeArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything(),
  fc.record({ t: fc.constantFrom('batch', 'requestDevice', 'hints', 'goodbye', 'hello', 'call'), cmds: fc.anything(), rid: fc.anything(), hints: fc.anything(), exitCode: fc.anything() }, { requiredKeys: ['t'] }),
  fc.constant({ t: 'hello', protocol: PROTOCOL_VERSION, role: 'control' }),
);

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
