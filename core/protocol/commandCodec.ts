/**
 * The binary command stream, made from the command table (commandTable.ts).
 *
 * A batch's commands are records of u32 words (little-endian): a header word
 * `opcode | recordWords << 8` (recordWords counts the header), then the op's
 * fields in table order, each as commandTable.ts's FieldSpec says. The client
 * writes them into one reused buffer (CommandWriter); the service decodes and
 * checks every field (decodeCommands): a record that is wrong is one malformed
 * command, reported to the job with what was wrong, and decoding goes on at the
 * next record; a record whose length runs past the stream ends the batch there.
 *
 * The encoder writes whatever it is given, as the bits a hostile peer could
 * send (a negative size becomes an out-of-range u64, a missing id becomes 0), so
 * one encoder serves the remote GPU (whose WebIDL layer converted every value
 * already) and the tests and fuzzers that send broken commands.
 *
 * Portable: no Node APIs.
 *
 * Past 450 lines on purpose: each field kind's encoder and its checking decoder
 * sit side by side, so the two halves of the wire cannot drift apart.
 */
import { COMMANDS, BULK_FILE_NAME, MAX_BINDINGS, type Command, type CommandOp, type FieldSpec } from './commandTable.js';
import { makeOpWriter, type OpWriter, type WriterTarget } from './commandWriters.js';

const ABSENT = 0xffffffff;
/** The high word of a u64 that is not one (negative, fractional, too large): any value above 2^21 − 1 is refused. */
const BAD_U64_HIGH = 0xfffffffe;
/** Opcode of a command whose op the table does not know (never a real opcode). */
const UNKNOWN_OPCODE = 0;
const TWO_32 = 2 ** 32;
const MAX_RECORD_WORDS = 0xffffff;

type FieldList = readonly (readonly [string, FieldSpec])[];
/** An op's row of the table, with its field names and specs also as two arrays (the decoder walks them by index). */
interface OpEntry { op: CommandOp; code: number; fields: FieldList; names: readonly string[]; specs: readonly FieldSpec[]; build?: Builder; write?: OpWriter | null }

const ENTRIES: OpEntry[] = (Object.keys(COMMANDS) as CommandOp[]).map((op) => {
  const fields = Object.entries(COMMANDS[op].fields) as unknown as FieldList;
  return { op, code: COMMANDS[op].code, fields, names: fields.map(([name]) => name), specs: fields.map(([, spec]) => spec) };
});
const BY_OP = new Map<string, OpEntry>(ENTRIES.map((entry) => [entry.op, entry]));
const BY_CODE: (OpEntry | undefined)[] = [];
for (const entry of ENTRIES) BY_CODE[entry.code] = entry;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

const isU32 = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;
const isU64 = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
/** A number as a u32 field takes it (then ToUint32); anything that is not a number, string or boolean is 0. */
const toNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' || typeof v === 'boolean' ? Number(v) : 0);

const WRITER_CONSTANTS = { isU32, isU64, toNumber, ABSENT, BAD_U64_HIGH, TWO_32, MAX_RECORD_WORDS };

/**
 * The op's generated writer, made at its first use as its decoder is (null: one of its fields is of a kind
 * commandWriters.ts does not write, and the table writes it).
 */
function writerOf(entry: OpEntry): OpWriter | null {
  if (entry.write === undefined) entry.write = makeOpWriter(entry.op, entry.code, entry.names, entry.specs, WRITER_CONSTANTS);
  return entry.write;
}

/**
 * Records commands into one growing buffer that is reused from batch to batch:
 * no object or string is made per command (strings excepted, as UTF-8 bytes).
 */
export class CommandWriter implements WriterTarget {
  /** The buffer and the position in words: read and moved by the generated writers (commandWriters.ts) too. */
  words = new Uint32Array(4096);
  private bytes = new Uint8Array(this.words.buffer);
  at = 0;
  /** Commands written since the last take(). */
  count = 0;

  /** Bytes written since the last take(). */
  get byteLength(): number {
    return this.at * 4;
  }

  /** Appends one command (any object with an `op`; see the file's header for what a wrong field becomes). */
  write(cmd: { op: string } | Record<string, unknown>): void {
    // Total, as a hostile peer's bytes are: a command that is no object is an unknown opcode's empty record.
    const fields = cmd !== null && typeof cmd === 'object' ? cmd as Record<string, unknown> : {};
    const entry = typeof fields.op === 'string' ? BY_OP.get(fields.op) : undefined;
    const writer = entry ? writerOf(entry) : null;
    if (writer) writer(this, fields);
    else this.writeFields(fields, entry);
  }

  /** Appends one command by walking its op's row of the table: the writer of every op, generated or not (tests compare the two). */
  writeByTable(cmd: { op: string } | Record<string, unknown>): void {
    const fields = cmd !== null && typeof cmd === 'object' ? cmd as Record<string, unknown> : {};
    this.writeFields(fields, typeof fields.op === 'string' ? BY_OP.get(fields.op) : undefined);
  }

  private writeFields(fields: Record<string, unknown>, entry: OpEntry | undefined): void {
    const start = this.at;
    this.reserve(1);
    this.at++;
    if (entry) for (const [name, spec] of entry.fields) this.field(spec, fields[name]);
    const recordWords = this.at - start;
    if (recordWords > MAX_RECORD_WORDS) {
      this.at = start;
      throw new RangeError(`salus: a ${entry?.op} command of ${recordWords * 4} bytes is larger than a command may be (${MAX_RECORD_WORDS * 4} bytes)`);
    }
    this.words[start] = (entry?.code ?? UNKNOWN_OPCODE) | (recordWords << 8);
    this.count++;
  }

  /** The bytes written since the last take(), copied out; the writer starts empty again. */
  take(): Uint8Array {
    const out = this.bytes.slice(0, this.at * 4);
    this.at = 0;
    this.count = 0;
    return out;
  }

  reserve(words: number): void {
    if (this.at + words <= this.words.length) return;
    let size = this.words.length * 2;
    while (size < this.at + words) size *= 2;
    const grown = new Uint32Array(size);
    grown.set(this.words.subarray(0, this.at));
    this.words = grown;
    this.bytes = new Uint8Array(grown.buffer);
  }

  private u32(value: number): void {
    this.reserve(1);
    this.words[this.at++] = value >>> 0;
  }

  private u64(value: unknown): void {
    this.reserve(2);
    if (value === undefined) {
      this.words[this.at++] = ABSENT;
      this.words[this.at++] = ABSENT;
    } else if (isU64(value)) {
      this.words[this.at++] = value % TWO_32;
      this.words[this.at++] = Math.floor(value / TWO_32);
    } else {
      this.words[this.at++] = 0;
      this.words[this.at++] = BAD_U64_HIGH;
    }
  }

  private string(value: unknown): void {
    if (value === undefined || value === null) return this.u32(ABSENT);
    let text: string;
    try {
      text = String(value);
    } catch {
      // No string at all (an object that will not convert): as if absent.
      return this.u32(ABSENT);
    }
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    this.reserve(1 + Math.ceil((text.length * 3) / 4));
    const { written } = utf8Encoder.encodeInto(text, this.bytes.subarray((this.at + 1) * 4));
    this.words[this.at] = written;
    this.at += 1 + Math.ceil(written / 4);
  }

  private list(values: unknown, each: (value: unknown) => void): void {
    if (!Array.isArray(values)) return this.u32(0);
    this.u32(values.length);
    for (const value of values) each(value);
  }

  private field(spec: FieldSpec, value: unknown): void {
    switch (spec.kind) {
      case 'id': case 'rid':
        return this.u32(isU32(value) ? value : 0);
      case 'id?': case 'rid?': case 'idOrNull': case 'layout':
        // Absent, null and 'auto' are 0, as is anything that is not an id.
        return this.u32(isU32(value) ? value : 0);
      case 'u32':
        return this.u32(toNumber(value));
      case 'u32?':
        this.u32(value === undefined ? 0 : 1);
        return this.u32(value === undefined ? 0 : toNumber(value));
      case 'u64': case 'u64?':
        return this.u64(spec.kind === 'u64' && value === undefined ? -1 : value);
      case 'bool?':
        return this.u32(value === undefined ? 0 : value ? 2 : 1);
      case 'string': case 'string?':
        return this.string(value);
      case 'enum': case 'enum?': {
        const index = spec.values.indexOf(value as string);
        return this.u32(index >= 0 ? index : value === undefined ? ABSENT : BAD_U64_HIGH);
      }
      case 'ids': case 'idsOrNull':
        return this.list(value, (id) => this.u32(isU32(id) ? id : 0));
      case 'u32s?':
        return this.list(value, (v) => this.u32(toNumber(v)));
      case 'data':
        if (Array.isArray(value)) {
          this.u32(0);
          this.u64(value[0]);
          return this.u64(value[1]);
        }
        if (value && typeof value === 'object' && 'file' in value) {
          this.u32(1);
          this.string((value as { file: unknown }).file);
          return this.u64((value as unknown as { length: unknown }).length);
        }
        if (value && typeof value === 'object' && 'scratch' in value) {
          this.u32(2);
          this.u64((value as { scratch: unknown }).scratch);
          return this.u64((value as unknown as { length: unknown }).length);
        }
        return this.u32(0xff);
      case 'bindings':
        return this.list(value, (entry) => {
          const e = (entry ?? {}) as Record<string, unknown>;
          this.u32(toNumber(e.binding));
          this.u32(isU32(e.buffer) ? e.buffer : 0);
          this.u64(e.offset);
          this.u64(e.size);
        });
      case 'timestampWrites?': {
        const tw = value as Record<string, unknown> | undefined;
        this.u32(tw && isU32(tw.querySet) ? tw.querySet : 0);
        this.field({ kind: 'u32?' }, tw?.beginningOfPassWriteIndex);
        return this.field({ kind: 'u32?' }, tw?.endOfPassWriteIndex);
      }
      case 'json': case 'json?': {
        let text: string | undefined;
        try {
          text = value === undefined ? undefined : JSON.stringify(value);
        } catch {
          // A value JSON cannot hold (a BigInt, a cycle): sent as not JSON, which the decoder refuses.
          text = '\u0000';
        }
        return this.string(text);
      }
    }
  }
}

/** The ops written by a generated writer (commandWriters.ts); the rest are written by walking the table. */
export function generatedWriterOps(): CommandOp[] {
  return ENTRIES.filter((entry) => writerOf(entry)).map((entry) => entry.op);
}

/** Encodes `cmds` as one command stream (tests, fuzzers, one-off senders). */
export function encodeCommands(cmds: readonly (Record<string, unknown> | { op: string })[]): Uint8Array {
  const writer = new CommandWriter();
  for (const cmd of cmds) writer.write(cmd);
  return writer.take();
}

/** A command that could not be decoded: what was wrong, and what of it could be read (so a request still gets its reply). */
export interface MalformedCommand {
  message: string;
  op?: string;
  id?: number;
  rid?: number;
}

/**
 * A decoded batch: its well-formed commands in order, each one's opcode (commandTable.ts's `code`: `codes[i]` is
 * `cmds[i]`'s, so the replay loop finds an op's facts by index, never by its name), and what was wrong with the others.
 */
export interface DecodedBatch {
  cmds: Command[];
  codes: number[];
  malformed: MalformedCommand[];
}

/** Whether each opcode's commands carry a request id. */
const AWAITS: readonly boolean[] = (() => {
  const awaits = new Array<boolean>(256).fill(false);
  for (const entry of ENTRIES) awaits[entry.code] = entry.names.includes('rid');
  return awaits;
})();

/**
 * The request ids of a batch, well-formed commands' and malformed ones' alike: each is owed one reply. With the
 * batch's `codes`, only the commands of ops that carry one are looked at.
 */
export function requestIds(batch: Pick<DecodedBatch, 'cmds' | 'malformed'> & { codes?: readonly number[] }): number[] {
  const { cmds, codes } = batch;
  const rids: number[] = [];
  for (let i = 0; i < cmds.length; i++) {
    if (codes && !AWAITS[codes[i]]) continue;
    const rid = (cmds[i] as { rid?: number }).rid;
    if (rid !== undefined) rids.push(rid);
  }
  for (const bad of batch.malformed) if (bad.rid !== undefined) rids.push(bad.rid);
  return rids;
}

/** Thrown inside the decoder for one field; becomes a MalformedCommand. */
class FieldError extends Error {}

/**
 * Decodes and checks a command stream. Never throws: every problem is a
 * malformed command with a message a person can act on.
 */
export function decodeCommands(stream: Uint8Array): DecodedBatch {
  if (stream.byteLength % 4 !== 0) {
    const message = `malformed batch: its ${stream.byteLength}-byte command stream is not a whole number of 4-byte words`;
    return { cmds: [], codes: [], malformed: [{ message }] };
  }
  // Typed arrays need aligned memory: a stream at an odd offset of its frame is copied once.
  const aligned = stream.byteOffset % 4 === 0 ? stream : new Uint8Array(stream);
  const reader = new Reader(new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4), aligned);
  // The arrays are made at their size, filled by index, then cut to the well-formed commands: pushing a few
  // thousand commands grew each a dozen times. At most one slot per record, so no more than the stream's words.
  const records = countRecords(reader.words);
  const batch: DecodedBatch = { cmds: new Array<Command>(records), codes: new Array<number>(records), malformed: [] };
  let decoded = 0;
  for (let index = 0; reader.at < reader.words.length; index++) {
    const header = reader.words[reader.at];
    const code = header & 0xff;
    const recordWords = header >>> 8;
    const entry = BY_CODE[code];
    if (recordWords === 0 || reader.at + recordWords > reader.words.length) {
      batch.malformed.push({
        message: `malformed command #${index} (${entry?.op ?? `opcode ${code}`}): its record of ${recordWords} words does not fit the ${reader.words.length - reader.at} words left in the batch; the rest of the batch is dropped`,
        op: entry?.op,
      });
      break;
    }
    const end = reader.at + recordWords;
    reader.at++;
    reader.end = end;
    if (!entry) {
      batch.malformed.push({ message: `malformed command #${index} (opcode ${code}): no command has this opcode` });
      reader.at = end;
      continue;
    }
    const progress = reader.progress;
    progress.name = '';
    progress.id = undefined;
    progress.rid = undefined;
    try {
      const cmd = (entry.build ??= makeBuilder(entry))(reader, entry.specs, progress, fieldError);
      progress.name = '';
      if (reader.at !== end) throw new FieldError(`${end - reader.at} words after the last field`);
      batch.cmds[decoded] = cmd;
      batch.codes[decoded++] = code;
    } catch (error) {
      if (!(error instanceof FieldError)) throw error;
      const { name, id, rid } = progress;
      batch.malformed.push({
        message: `malformed command #${index} (${entry.op}): ${name ? `${name}: ` : ''}${error.message}`,
        op: entry.op,
        id: typeof id === 'number' ? id : undefined,
        rid: typeof rid === 'number' ? rid : undefined,
      });
    }
    reader.at = end;
  }
  // Malformed records took no slot.
  batch.cmds.length = decoded;
  batch.codes.length = decoded;
  return batch;
}

/** How many records `words` holds, by their headers' lengths (up to a record that is empty or runs past the end). */
function countRecords(words: Uint32Array): number {
  let records = 0;
  for (let at = 0; at < words.length; records++) {
    const recordWords = words[at] >>> 8;
    if (recordWords === 0) break;
    at += recordWords;
  }
  return records;
}

/**
 * Where decoding one record got to: the field being read (for the message when it is wrong), and the record's
 * `id` and `rid` once read (a malformed creating or awaiting command still names them). One per batch, reused.
 */
interface Progress {
  name: string;
  id: unknown;
  rid: unknown;
}

/** Makes one op's command from its record: every field read and checked, in table order (see makeBuilder). */
type Builder = (reader: Reader, specs: readonly FieldSpec[], progress: Progress, fail: (message: string) => FieldError) => Command;

/**
 * The one-word field kinds a builder reads inline (the rest go through Reader.field): what a 0 word means
 * (`zero`: the value it stands for, or the field's error when 0 is not allowed). The same checks and messages as Reader.field's.
 */
const ONE_WORD: Partial<Record<FieldSpec['kind'], { zero?: string; error?: string }>> = {
  'id': { error: 'must be an object id (1 or more)' },
  'rid': { error: 'must be a request id (1 or more)' },
  'id?': { zero: 'undefined' },
  'rid?': { zero: 'undefined' },
  'idOrNull': { zero: 'null' },
  'layout': { zero: "'auto'" },
  'u32': {},
};

/**
 * The builder of `entry`'s op, made from its table row: straight-line code that reads each field and returns one
 * object literal `{ op, ...fields }` (fields in table order, absent optional ones as undefined, as before). So each
 * op's commands share one hidden class with their fields in the object, made in one allocation, and no field is
 * stored by a computed name. One-word fields (ids, u32s: all of the hot commands' fields) are read inline from the
 * words, with Reader.field's checks and messages; the field's name is noted only when it is wrong. Made at an op's
 * first decode (only the service decodes), from the table's own names.
 */
function makeBuilder(entry: OpEntry): Builder {
  const reads = entry.names.map((name, i) => {
    const quoted = JSON.stringify(name);
    const note = name === 'id' || name === 'rid' ? ` progress.${name} = v${i};` : '';
    const inline = ONE_WORD[entry.specs[i].kind];
    if (!inline) return `reader.at = at; progress.name = ${quoted}; const v${i} = reader.field(specs[${i}]); at = reader.at;${note}`;
    const fail = (message: string) => `{ progress.name = ${quoted}; throw fail(${JSON.stringify(message)}); }`;
    const word = `if (at >= end) ${fail('the record ends before this field')} const w${i} = words[at++];`;
    if (inline.error) return `${word} if (w${i} === 0) ${fail(inline.error)} const v${i} = w${i};${note}`;
    return `${word} const v${i} = ${inline.zero ? `w${i} || ${inline.zero}` : `w${i}`};${note}`;
  });
  const fields = entry.names.map((name, i) => `${JSON.stringify(name)}: v${i}`);
  const body = [
    'const words = reader.words; const end = reader.end; let at = reader.at;',
    ...reads,
    'reader.at = at;',
    `return { op: ${JSON.stringify(entry.op)}${fields.map((f) => `, ${f}`).join('')} };`,
  ];
  // Generated from commandTable.ts's names (never from a peer's bytes), as dawn_wire's code is from dawn.json.
  return new Function('reader', 'specs', 'progress', 'fail', body.join('\n')) as Builder;
}

/** A field's error, for the generated builders. */
const fieldError = (message: string): FieldError => new FieldError(message);

/** Reads fields from one record, checking each against the record's end. */
class Reader {
  at = 0;
  end = 0;
  readonly progress: Progress = { name: '', id: undefined, rid: undefined };

  constructor(readonly words: Uint32Array, private readonly bytes: Uint8Array) {}

  private need(words: number): void {
    if (this.at + words > this.end) throw new FieldError('the record ends before this field');
  }

  private u32(): number {
    this.need(1);
    return this.words[this.at++];
  }

  private id(): number {
    const value = this.u32();
    if (value === 0) throw new FieldError('must be an object id (1 or more)');
    return value;
  }

  private u64(optional: boolean): number | undefined {
    this.need(2);
    const low = this.words[this.at++];
    const high = this.words[this.at++];
    if (optional && low === ABSENT && high === ABSENT) return undefined;
    if (high > 0x1fffff) throw new FieldError('must be a whole number from 0 to 2^53 - 1');
    return high * TWO_32 + low;
  }

  private optU32(): number | undefined {
    const present = this.u32();
    const value = this.u32();
    if (present > 1) throw new FieldError(`presence word ${present} is neither 0 nor 1`);
    return present ? value : undefined;
  }

  private string(max: number, optional: boolean): string | undefined {
    const length = this.u32();
    if (length === ABSENT) {
      if (optional) return undefined;
      throw new FieldError('is missing');
    }
    const words = Math.ceil(length / 4);
    this.need(words);
    let text: string;
    try {
      text = utf8Decoder.decode(this.bytes.subarray(this.at * 4, this.at * 4 + length));
    } catch {
      throw new FieldError('is not UTF-8');
    }
    this.at += words;
    if (text.length > max) throw new FieldError(`is ${text.length} characters long, more than ${max}`);
    return text;
  }

  private count(max: number, wordsEach: number): number {
    const count = this.u32();
    if (count > max) throw new FieldError(`has ${count} entries, more than ${max}`);
    this.need(count * wordsEach);
    return count;
  }

  field(spec: FieldSpec): unknown {
    switch (spec.kind) {
      case 'id': return this.id();
      case 'id?': return this.u32() || undefined;
      case 'idOrNull': return this.u32() || null;
      case 'layout': return this.u32() || 'auto';
      case 'u32': return this.u32();
      case 'u32?': return this.optU32();
      case 'u64': return this.u64(false);
      case 'u64?': return this.u64(true);
      case 'rid': {
        const rid = this.u32();
        if (rid === 0) throw new FieldError('must be a request id (1 or more)');
        return rid;
      }
      case 'rid?': return this.u32() || undefined;
      case 'bool?': {
        const value = this.u32();
        if (value > 2) throw new FieldError(`${value} is not a boolean (0 absent, 1 false, 2 true)`);
        return value === 0 ? undefined : value === 2;
      }
      case 'string': case 'string?': return this.string(spec.max, spec.kind === 'string?');
      case 'enum': case 'enum?': {
        const index = this.u32();
        if (index === ABSENT && spec.kind === 'enum?') return undefined;
        if (index >= spec.values.length) throw new FieldError(`must be one of ${spec.values.join(', ')}`);
        return spec.values[index];
      }
      case 'ids': case 'idsOrNull': {
        const count = this.count(spec.max, 1);
        const ids: (number | null)[] = new Array(count);
        for (let i = 0; i < count; i++) {
          const id = this.words[this.at++];
          if (id === 0 && spec.kind === 'ids') throw new FieldError(`entry ${i} must be an object id (1 or more)`);
          ids[i] = id || null;
        }
        return ids;
      }
      case 'u32s?': {
        const count = this.count(spec.max, 1);
        if (count === 0) return undefined;
        const values = Array.from(this.words.subarray(this.at, this.at + count));
        this.at += count;
        return values;
      }
      case 'data': {
        const tag = this.u32();
        if (tag === 0) return [this.u64(false), this.u64(false)];
        if (tag === 2) return { scratch: this.u64(false), length: this.u64(false) };
        if (tag !== 1) throw new FieldError(`data tag ${tag} is none of 0 (in the batch), 1 (a bulk file), 2 (the scratch file)`);
        const file = this.string(256, false)!;
        if (!BULK_FILE_NAME.test(file)) throw new FieldError(`'${file}' is not a bulk file's name`);
        return { file, length: this.u64(false) };
      }
      case 'bindings': {
        const count = this.count(MAX_BINDINGS, 6);
        const entries: { binding: number; buffer: number; offset?: number; size?: number }[] = new Array(count);
        for (let i = 0; i < count; i++) {
          const binding = this.u32();
          const buffer = this.id();
          const offset = this.u64(true);
          const size = this.u64(true);
          const entry: { binding: number; buffer: number; offset?: number; size?: number } = { binding, buffer };
          if (offset !== undefined) entry.offset = offset;
          if (size !== undefined) entry.size = size;
          entries[i] = entry;
        }
        return entries;
      }
      case 'timestampWrites?': {
        const querySet = this.u32();
        const beginningOfPassWriteIndex = this.optU32();
        const endOfPassWriteIndex = this.optU32();
        if (querySet === 0) return undefined;
        return { querySet, beginningOfPassWriteIndex, endOfPassWriteIndex };
      }
      case 'json': case 'json?': {
        const text = this.string(16 * 1024 * 1024, spec.kind === 'json?');
        if (text === undefined) return undefined;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          throw new FieldError('is not JSON');
        }
        const parsed = spec.schema.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new FieldError(`${issue.path.join('.') || '(value)'}: ${issue.message}`);
        }
        return parsed.data;
      }
    }
  }
}
