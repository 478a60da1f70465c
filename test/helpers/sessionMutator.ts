/**
 * Mutations of a recorded job session (recordingProxy.ts), the way a broken or
 * hostile job would send it: frames and commands dropped, duplicated,
 * reordered, batches split and merged, numbers set to edge values, ids swapped
 * to another object's or another job's, sizes, offsets, usages and dynamic
 * offsets perturbed, a destroy or release inserted before a use, goodbyes and
 * requests where none belong, JSON numbers no encoder writes (1e400 parses as
 * Infinity), bit flips in prefixes, headers, command streams and payloads, and a
 * frame cut short. Batches are edited as command objects (decoded from the
 * recording's binary command streams) and encoded again by the wire's own
 * encoder, which writes a wrong value as the bits a hostile peer would send.
 *
 * Pure and seeded: the same session, seed and context give the same mutant.
 */
import { FrameDecoder, MAX_FRAME_BYTES } from '../../core/protocol/frames.js';
import { helloSchema, jobMessageSchema, PROTOCOL_VERSION } from '../../core/protocol/messages.js';
import { isRequestId } from '../../core/protocol/commands.js';
import { decodeCommands, encodeCommands, requestIds } from '../../core/protocol/commandCodec.js';
import type { RecordedFrame } from './recordingProxy.js';

type Json = Record<string, unknown>;
type Frame = { header: unknown; payload: Uint8Array };

/** What a mutation may borrow from outside the session: other sessions' frames and a victim job's id. */
export interface MutationContext {
  others: readonly RecordedFrame[][];
  victimJobId: string;
}

/** A mutated session, ready for the wire: its frames' bytes in order, and what was done to it. */
export interface Mutant {
  wire: Uint8Array[];
  mutations: string[];
  /** Hang up this long after the last byte is written, without waiting for answers (a job killed mid-flight). */
  hangUpAfterMs?: number;
}

const EDGE_VALUES: unknown[] = [0, -1, 1, 3, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53, 2 ** 64, 1e308, -0, 0.5, Number.NaN, '7', true, null, [], {}];
/** JSON number spellings that no encoder writes: overflow to ±Infinity, underflow to 0, past 2^64. */
const EDGE_TOKENS = ['1e400', '-1e400', '1e-400', '-0', '18446744073709551616', '4294967296', '0.1', '-2147483648'];
const ID_FIELDS = new Set(['id', 'buffer', 'layout', 'module', 'pipeline', 'pass', 'encoder', 'src', 'dst', 'bindGroup', 'querySet', 'target', 'device']);
const SIZE_FIELDS = new Set(['size', 'offset', 'srcOffset', 'dstOffset', 'count', 'first', 'x', 'y', 'z', 'minBindingSize', 'binding', 'index', 'length']);
const BIT_FIELDS = new Set(['usage', 'mode', 'visibility']);
const CREATING_OPS = new Set(['createBuffer', 'createShaderModule', 'createBindGroupLayout', 'createPipelineLayout', 'createComputePipeline', 'getBindGroupLayout', 'createBindGroup', 'createQuerySet', 'createCommandEncoder', 'beginComputePass', 'finish']);

type Rand = () => number;
const pick = <T>(rand: Rand, list: readonly T[]): T => list[Math.floor(rand() * list.length)];
const isBatch = (frame: Frame): boolean => (frame.header as Json | null)?.t === 'batch' && Array.isArray((frame.header as Json).cmds);
const cmdsOf = (frame: Frame): Json[] => (frame.header as { cmds: Json[] }).cmds;

/** Every numeric field of a command, as [holder, key] pairs (nested entries and arrays included). */
function numericFields(value: unknown, out: [Json | unknown[], string | number][] = []): [Json | unknown[], string | number][] {
  if (Array.isArray(value)) value.forEach((item, i) => (typeof item === 'number' ? out.push([value, i]) : numericFields(item, out)));
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (typeof item === 'number') out.push([value as Json, key]);
      else numericFields(item, out);
    }
  }
  return out;
}

/** Object ids a command names (the ids it creates and the ones it uses). */
function idsOf(cmd: Json): number[] {
  const ids = [...ID_FIELDS].map((key) => cmd[key]).filter((v): v is number => typeof v === 'number');
  for (const key of ['commandBuffers', 'bindGroupLayouts']) if (Array.isArray(cmd[key])) ids.push(...(cmd[key] as unknown[]).filter((v): v is number => typeof v === 'number'));
  if (Array.isArray(cmd.entries)) for (const e of cmd.entries as Json[]) if (typeof e?.buffer === 'number') ids.push(e.buffer);
  return ids;
}

/** A random command of a random batch among `frames`, with its place. */
function someCommand(rand: Rand, frames: Frame[]): { frame: Frame; index: number; cmd: Json } | null {
  const batches = frames.filter((f) => isBatch(f) && cmdsOf(f).length > 0);
  if (batches.length === 0) return null;
  const frame = pick(rand, batches);
  const index = Math.floor(rand() * cmdsOf(frame).length);
  return { frame, index, cmd: cmdsOf(frame)[index] };
}

type Op = (rand: Rand, frames: Frame[], context: MutationContext) => string | null;

/** Structural and field mutations over parsed frames (index 0 is the hello). */
const FRAME_OPS: Record<string, Op> = {
  dropFrame: (rand, frames) => { const i = 1 + Math.floor(rand() * (frames.length - 1)); frames.splice(i, 1); return `drop frame ${i}`; },
  duplicateFrame: (rand, frames) => { const i = Math.floor(rand() * frames.length); frames.splice(i, 0, structuredClone(frames[i])); return `duplicate frame ${i}`; },
  moveFrame: (rand, frames) => {
    const from = 1 + Math.floor(rand() * (frames.length - 1));
    const to = 1 + Math.floor(rand() * (frames.length - 1));
    frames.splice(to, 0, ...frames.splice(from, 1));
    return `move frame ${from} to ${to}`;
  },
  splitBatch: (rand, frames) => {
    const i = frames.findIndex((f, n) => n > 0 && isBatch(f) && cmdsOf(f).length > 1 && rand() < 0.5);
    if (i < 0) return null;
    const cmds = cmdsOf(frames[i]);
    const at = 1 + Math.floor(rand() * (cmds.length - 1));
    frames.splice(i, 1, { header: { t: 'batch', cmds: cmds.slice(0, at) }, payload: frames[i].payload }, { header: { t: 'batch', cmds: cmds.slice(at) }, payload: frames[i].payload });
    return `split batch ${i} at command ${at}`;
  },
  mergeBatches: (rand, frames) => {
    const starts = frames.map((f, i) => i).filter((i) => isBatch(frames[i]) && frames[i + 1] && isBatch(frames[i + 1]));
    if (starts.length === 0) return null;
    const i = pick(rand, starts);
    const [a, b] = [frames[i], frames[i + 1]];
    const shift = a.payload.byteLength;
    const moved = structuredClone(cmdsOf(b)).map((cmd) => (Array.isArray(cmd.data) ? { ...cmd, data: [(cmd.data[0] as number) + shift, cmd.data[1]] } : cmd));
    const payload = new Uint8Array(shift + b.payload.byteLength);
    payload.set(a.payload);
    payload.set(b.payload, shift);
    frames.splice(i, 2, { header: { t: 'batch', cmds: [...cmdsOf(a), ...moved] }, payload });
    return `merge batches ${i} and ${i + 1}`;
  },
  dropCommand: (rand, frames) => { const at = someCommand(rand, frames); if (!at) return null; cmdsOf(at.frame).splice(at.index, 1); return `drop ${at.cmd.op}`; },
  duplicateCommand: (rand, frames) => { const at = someCommand(rand, frames); if (!at) return null; cmdsOf(at.frame).splice(at.index, 0, structuredClone(at.cmd)); return `duplicate ${at.cmd.op}`; },
  moveCommand: (rand, frames) => {
    const from = someCommand(rand, frames);
    const to = someCommand(rand, frames);
    if (!from || !to) return null;
    cmdsOf(from.frame).splice(from.index, 1);
    cmdsOf(to.frame).splice(Math.min(to.index, cmdsOf(to.frame).length), 0, from.cmd);
    return `move ${from.cmd.op} before ${to.cmd.op}`;
  },
  edgeValue: (rand, frames) => {
    const at = someCommand(rand, frames);
    const fields = at ? numericFields(at.cmd) : [];
    if (!at || fields.length === 0) return null;
    const [holder, key] = pick(rand, fields);
    const value = pick(rand, EDGE_VALUES);
    (holder as Record<string | number, unknown>)[key] = value;
    return `${at.cmd.op}.${key} = ${JSON.stringify(value)}`;
  },
  perturbSize: (rand, frames) => {
    const at = someCommand(rand, frames);
    const fields = at ? numericFields(at.cmd).filter(([holder, key]) => SIZE_FIELDS.has(String(key)) || Array.isArray(holder)) : [];
    if (!at || fields.length === 0) return null;
    const [holder, key] = pick(rand, fields);
    const record = holder as Record<string | number, number>;
    const delta = pick(rand, [1, -1, 4, -4, 256, -256, 2 ** 20]);
    record[key] = rand() < 0.2 ? record[key] * 2 : record[key] + delta;
    return `${at.cmd.op}.${key} -> ${record[key]}`;
  },
  flipBits: (rand, frames) => {
    const at = someCommand(rand, frames);
    const key = at ? [...BIT_FIELDS].find((k) => typeof at.cmd[k] === 'number') : undefined;
    if (!at || !key) return null;
    at.cmd[key] = ((at.cmd[key] as number) ^ (1 << Math.floor(rand() * 12))) >>> 0;
    return `${at.cmd.op}.${key} ^= bit`;
  },
  swapId: (rand, frames, context) => {
    const at = someCommand(rand, frames);
    const keys = at ? [...ID_FIELDS].filter((k) => typeof at.cmd[k] === 'number') : [];
    if (!at || keys.length === 0) return null;
    const source = rand() < 0.7 ? frames : pick(rand, context.others) ?? frames;
    const pool = source.filter(isBatch).flatMap((f) => cmdsOf(f).flatMap(idsOf));
    const key = pick(rand, keys);
    at.cmd[key] = pool.length > 0 ? pick(rand, pool) : 1;
    return `${at.cmd.op}.${key} -> id ${at.cmd[key]}`;
  },
  dynamicOffsets: (rand, frames) => {
    const passes = frames.filter(isBatch).flatMap((f) => cmdsOf(f)).filter((c) => c.op === 'setBindGroup');
    if (passes.length === 0) return null;
    const cmd = pick(rand, passes);
    cmd.dynamicOffsets = pick(rand, [[0], [256], [3], [2 ** 32 - 256], [0, 256], Array.from({ length: 65 }, () => 0)]);
    return `setBindGroup.dynamicOffsets = ${JSON.stringify(cmd.dynamicOffsets).slice(0, 20)}`;
  },
  useAfterDestroy: (rand, frames) => {
    const at = someCommand(rand, frames);
    const used = at ? idsOf(at.cmd).filter((id) => !(CREATING_OPS.has(at.cmd.op as string) && id === at.cmd.id)) : [];
    if (!at || used.length === 0) return null;
    const op = pick(rand, ['destroy', 'release']);
    cmdsOf(at.frame).splice(Math.floor(rand() * (at.index + 1)), 0, { op, id: pick(rand, used) });
    return `${op} before ${at.cmd.op}`;
  },
  foreignData: (rand, frames, context) => {
    const at = someCommand(rand, frames);
    if (!at || !('data' in at.cmd)) return null;
    at.cmd.data = pick(rand, [{ file: `${context.victimJobId}-1`, length: 4 }, [at.frame.payload.byteLength, 4], [0, 2 ** 40], [2 ** 53, 1]]);
    return `${at.cmd.op}.data = ${JSON.stringify(at.cmd.data)}`;
  },
  reuseRid: (rand, frames) => {
    const requests = frames.filter(isBatch).flatMap((f) => cmdsOf(f)).filter((c) => typeof c.rid === 'number');
    if (requests.length < 2) return null;
    const [a, b] = [pick(rand, requests), pick(rand, requests)];
    b.rid = a.rid;
    return `${b.op}.rid = ${a.op}'s`;
  },
  insertMessage: (rand, frames) => {
    const i = 1 + Math.floor(rand() * (frames.length - 1));
    const header = pick(rand, [{ t: 'goodbye', exitCode: 0 }, { t: 'requestDevice', rid: 1 }, { t: 'hints', hints: { persistentBytes: 2 ** 50 } }, { t: 'batch', cmds: [{ op: 'destroyDevice' }] }]);
    frames.splice(i, 0, { header, payload: new Uint8Array(0) });
    return `insert ${(header as Json).t} at ${i}`;
  },
  helloField: (rand, frames) => {
    const hello = frames[0].header as Json;
    const key = pick(rand, ['protocol', 'role', 'pid', 'iterationSource']);
    hello[key] = pick(rand, [0, -1, 2 ** 53, 'control', 'sdk', 'x'.repeat(300)]);
    return `hello.${key} changed`;
  },
};

/** JSON text, then bytes: mutations no parsed header can express. */
const TEXT_OPS: Record<string, (rand: Rand, text: string) => string> = {
  edgeToken: (rand, text) => {
    const numbers = [...text.matchAll(/(?<=[:,[])-?\d+(\.\d+)?(e[+-]?\d+)?(?=[,\]}])/g)];
    if (numbers.length === 0) return text;
    const match = pick(rand, numbers);
    return text.slice(0, match.index) + pick(rand, EDGE_TOKENS) + text.slice(match.index! + match[0].length);
  },
};

function frameBytes(text: string, payload: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(text);
  const bytes = new Uint8Array(8 + json.byteLength + payload.byteLength);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, 4 + json.byteLength + payload.byteLength, true);
  view.setUint32(4, json.byteLength, true);
  bytes.set(json, 8);
  bytes.set(payload, 8 + json.byteLength);
  return bytes;
}

/** A recorded frame to edit: a binary batch becomes `{t: 'batch', cmds}` (its commands as objects) with its data section. */
function editable(frame: RecordedFrame): Frame {
  const header = frame.header as Json | null;
  if (header?.t !== 'batch' || typeof header.commandBytes !== 'number' || header.commandBytes > frame.payload.byteLength) {
    return { header: structuredClone(frame.header), payload: frame.payload };
  }
  const { cmds } = decodeCommands(frame.payload.subarray(0, header.commandBytes));
  return { header: { t: 'batch', cmds }, payload: frame.payload.subarray(header.commandBytes) };
}

/** An edited frame as the wire has it: a batch of command objects gets its binary command stream again. */
function wireFrame(frame: Frame): Frame {
  if (!isBatch(frame)) return frame;
  const commands = encodeCommands(cmdsOf(frame));
  const payload = new Uint8Array(commands.byteLength + frame.payload.byteLength);
  payload.set(commands);
  payload.set(frame.payload, commands.byteLength);
  return { header: { t: 'batch', commandBytes: commands.byteLength }, payload };
}

/** Applies 1–3 seeded mutations to `session` (not changed) and encodes the result. */
export function mutateSession(session: readonly RecordedFrame[], rand: Rand, context: MutationContext): Mutant {
  const frames: Frame[] = session.map(editable);
  const mutations: string[] = [];
  const wireOps: ('edgeToken' | 'bitFlip' | 'truncate')[] = [];
  const count = 1 + Math.floor(rand() * 3);
  const names = Object.keys(FRAME_OPS);
  for (let attempt = 0; mutations.length + wireOps.length < count && attempt < 20; attempt++) {
    const roll = rand();
    if (roll >= 0.7) {
      wireOps.push(roll < 0.8 ? 'edgeToken' : roll < 0.9 ? 'bitFlip' : 'truncate');
      continue;
    }
    const name = pick(rand, names);
    // The hello rarely: a mutant refused at once tests little.
    if (frames.length < 2 || (name === 'helloField' && rand() < 0.8)) continue;
    const done = FRAME_OPS[name](rand, frames, context);
    if (done) mutations.push(done);
  }
  const encoded = frames.map(wireFrame);
  const texts = encoded.map((f) => JSON.stringify(f.header));
  const wire: Uint8Array[] = [];
  for (let n = wireOps.filter((o) => o === 'edgeToken').length; n > 0; n--) {
    const i = 1 + Math.floor(rand() * (texts.length - 1));
    const before = texts[i];
    if (before) texts[i] = TEXT_OPS.edgeToken(rand, before);
    mutations.push(`number token in frame ${i}`);
  }
  wire.push(...encoded.map((f, i) => frameBytes(texts[i], f.payload)));
  for (const op of wireOps.filter((o) => o !== 'edgeToken')) {
    const i = 1 + Math.floor(rand() * (wire.length - 1));
    if (!wire[i]) continue;
    if (op === 'bitFlip') {
      const bytes = wire[i].slice();
      const bit = Math.floor(rand() * bytes.byteLength * 8);
      bytes[bit >> 3] ^= 1 << (bit & 7);
      wire[i] = bytes;
      mutations.push(`flip bit ${bit} of frame ${i} (${bit < 64 ? 'prefix' : 'header or payload'})`);
    } else {
      wire.splice(i + 1);
      wire[i] = wire[i].subarray(0, Math.floor(rand() * wire[i].byteLength));
      mutations.push(`cut frame ${i} to ${wire[i].byteLength} bytes and hang up`);
    }
  }
  // Now and then the job dies mid-flight: its cleanup races its own replay.
  const hangUpAfterMs = rand() < 0.2 ? pick(rand, [0, 1, 5, 20, 50]) : undefined;
  if (hangUpAfterMs !== undefined) mutations.push(`hang up ${hangUpAfterMs} ms after the last byte`);
  return { wire, mutations, hangUpAfterMs };
}

/** What the service will make of a mutant's bytes: the requests it must answer (rid → times asked; rids that are no request id are no request) and whether it must drop the stream. */
export interface MutantRequests {
  rids: Map<number, number>;
  /** The stream cannot be framed (or the hello is refused): the service must send an error frame and hang up. */
  dropped: boolean;
}

/**
 * Frames `wire` as the service does, and counts the requests in messages the service accepts.
 * The hello (never cut or flipped here) is assumed sent alone, its welcome awaited, as clients do.
 */
export function requestsOf(wire: readonly Uint8Array[]): MutantRequests {
  const decoder = new FrameDecoder(MAX_FRAME_BYTES);
  const rids = new Map<number, number>();
  const ask = (rid: unknown) => { if (isRequestId(rid)) rids.set(rid, (rids.get(rid) ?? 0) + 1); };
  let hello: Json | null = null;
  for (const bytes of wire) {
    let frames;
    try {
      frames = decoder.push(bytes);
    } catch {
      return { rids, dropped: true };
    }
    for (const { header, payload } of frames) {
      if (!hello) {
        const parsed = helloSchema.safeParse(header);
        if (!parsed.success || parsed.data.protocol !== PROTOCOL_VERSION) return { rids, dropped: true };
        hello = parsed.data;
        continue;
      }
      const message = hello.role === 'job' ? jobMessageSchema.safeParse(header) : null;
      if (!message?.success) continue;
      if (message.data.t === 'requestDevice') ask(message.data.rid);
      // As the service does: a batch whose command stream is longer than its payload is refused whole.
      if (message.data.t === 'batch' && message.data.commandBytes <= payload.byteLength) {
        for (const rid of requestIds(decodeCommands(payload.subarray(0, message.data.commandBytes)))) ask(rid);
      }
    }
  }
  return { rids, dropped: false };
}

/** A mutant as a file (its mutations and hang-up as a JSON line, then each wire chunk as u32le length + bytes), so a failing case replays exactly. */
export function mutantFile(mutant: Mutant): Uint8Array {
  const head = new TextEncoder().encode(`${JSON.stringify({ mutations: mutant.mutations, hangUpAfterMs: mutant.hangUpAfterMs })}\n`);
  const out = new Uint8Array(head.byteLength + mutant.wire.reduce((n, w) => n + 4 + w.byteLength, 0));
  out.set(head);
  let at = head.byteLength;
  for (const chunk of mutant.wire) {
    new DataView(out.buffer).setUint32(at, chunk.byteLength, true);
    out.set(chunk, at + 4);
    at += 4 + chunk.byteLength;
  }
  return out;
}

/** Reads back what mutantFile wrote. */
export function parseMutantFile(bytes: Uint8Array): Mutant {
  const newline = bytes.indexOf(10);
  const { mutations, hangUpAfterMs } = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline))) as Omit<Mutant, 'wire'>;
  const wire: Uint8Array[] = [];
  for (let at = newline + 1; at < bytes.byteLength;) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0, true);
    wire.push(bytes.slice(at + 4, at + 4 + length));
    at += 4 + length;
  }
  return { wire, mutations, hangUpAfterMs };
}
