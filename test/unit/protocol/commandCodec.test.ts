/**
 * The binary command stream against its table: every command of the table
 * survives encode → decode as it was (property-tested over values made from
 * the table itself), and every way a record can be wrong is one malformed
 * command with a message, never a throw, with the rest of the batch intact.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMMANDS, type Command, type CommandOp, type FieldSpec } from '../../../core/protocol/commandTable.js';
import { CommandWriter, decodeCommands, encodeCommands, requestIds } from '../../../core/protocol/commandCodec.js';

const u32 = fc.nat({ max: 0xffffffff });
const id = fc.integer({ min: 1, max: 0xffffffff });
const u64 = fc.oneof(fc.nat({ max: 1 << 20 }), fc.constantFrom(0, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER));
const text = (max: number) => fc.string({ maxLength: Math.min(max, 40), unit: fc.constantFrom('a', 'é', '€', '😀', '\u0000', ' ') });
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** A valid value of each field kind (what the client's WebIDL layer lets through). */
function valueOf(spec: FieldSpec): fc.Arbitrary<unknown> {
  switch (spec.kind) {
    case 'id': case 'rid': return id;
    case 'id?': case 'rid?': return opt(id);
    case 'idOrNull': return fc.option(id, { nil: null });
    case 'layout': return fc.oneof(fc.constant('auto'), id);
    case 'u32': return u32;
    case 'u32?': return opt(u32);
    case 'u64': return u64;
    case 'u64?': return opt(u64);
    case 'bool?': return opt(fc.boolean());
    case 'string': return text(spec.max);
    case 'string?': return opt(text(spec.max));
    case 'enum': return fc.constantFrom(...spec.values);
    case 'enum?': return opt(fc.constantFrom(...spec.values));
    case 'ids': return fc.array(id, { maxLength: 5 });
    case 'idsOrNull': return fc.array(fc.option(id, { nil: null }), { maxLength: 5 });
    case 'u32s?': return opt(fc.array(u32, { minLength: 1, maxLength: 5 }));
    case 'data': return fc.oneof(
      fc.tuple(u64, u64),
      fc.record({ file: fc.constantFrom('job-3-1', 'job-12-400'), length: u64 }),
      fc.record({ scratch: u64, length: u64 }),
    );
    case 'bindings': return fc.array(fc.record({ binding: u32, buffer: id, offset: u64, size: u64 }, { requiredKeys: ['binding', 'buffer'] }), { maxLength: 4 });
    case 'timestampWrites?': return opt(fc.record({ querySet: id, beginningOfPassWriteIndex: opt(u32), endOfPassWriteIndex: opt(u32) }));
    case 'json': case 'json?': return jsonSample(spec);
  }
}

/** The cold descriptors: a few values each schema accepts. */
function jsonSample(spec: FieldSpec & { kind: 'json' | 'json?' }): fc.Arbitrary<unknown> {
  const samples: unknown[] = [
    [], ['timestamp-query'], { maxBufferSize: 1024 }, {}, { a: 1.5 },
    [{ binding: 0, visibility: 4, buffer: { type: 'storage', hasDynamicOffset: true } }],
    [{ binding: 1, visibility: 4, sampler: {} }],
    // Textures' descriptors (core/protocol/textureSchemas.ts).
    [4, 4, 1],
    { size: [4, 4, 1], mipLevelCount: 1, sampleCount: 1, dimension: '2d', format: 'rgba8unorm', usage: 6, viewFormats: [] },
    { texture: 3, mipLevel: 0, origin: [0, 0, 0], aspect: 'all' },
    { offset: 0, bytesPerRow: 256 }, { buffer: 2, offset: 8, bytesPerRow: 256, rowsPerImage: 4 },
    [{ binding: 0, textureView: 5 }, { binding: 1, sampler: 6 }, { binding: 2, buffer: 7, size: 16 }],
  ];
  const valid = samples.filter((value) => spec.schema.safeParse(value).success);
  return spec.kind === 'json' ? fc.constantFrom(...valid) : opt(fc.constantFrom(...valid));
}

const OPS = Object.keys(COMMANDS) as CommandOp[];
const commandArbitrary: fc.Arbitrary<Record<string, unknown>> = fc.constantFrom(...OPS).chain((op) => {
  const fields = Object.entries(COMMANDS[op].fields) as [string, FieldSpec][];
  return fc.tuple(...fields.map(([, spec]) => valueOf(spec))).map((values) => {
    const cmd: Record<string, unknown> = { op };
    fields.forEach(([name], i) => { cmd[name] = values[i]; });
    return cmd;
  });
});

/** What a decoded command must equal: the sent one, with absent fields dropped. */
const normal = (cmd: Record<string, unknown>) => JSON.parse(JSON.stringify(cmd, (_, v) => (v === undefined ? undefined : v)));

describe('the command stream', () => {
  it('decodes every command of the table as it was encoded', () => {
    fc.assert(fc.property(fc.array(commandArbitrary, { minLength: 1, maxLength: 30 }), (cmds) => {
      const decoded = decodeCommands(encodeCommands(cmds));
      expect(decoded.malformed).toEqual([]);
      expect(decoded.cmds.map(normal)).toEqual(cmds.map(normal));
    }), { numRuns: 400 });
  });

  it("makes each op's commands with op first, then every field of its row in table order (absent ones undefined)", () => {
    fc.assert(fc.property(fc.array(commandArbitrary, { minLength: 1, maxLength: 30 }), (cmds) => {
      for (const cmd of decodeCommands(encodeCommands(cmds)).cmds) {
        expect(Object.keys(cmd)).toEqual(['op', ...Object.keys(COMMANDS[cmd.op].fields)]);
      }
    }), { numRuns: 100 });
  });

  it('has one opcode per op, each fitting the header byte', () => {
    const codes = OPS.map((op) => COMMANDS[op].code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) {
      expect(code).toBeGreaterThan(0);
      expect(code).toBeLessThan(256);
    }
  });

  it('reuses one buffer across batches and decodes a stream at any byte offset', () => {
    const writer = new CommandWriter();
    for (let batch = 0; batch < 3; batch++) {
      for (let i = 0; i < 5000; i++) writer.write({ op: 'dispatch', pass: 7, x: i, y: 1, z: 1 });
      expect(writer.count).toBe(5000);
      const bytes = writer.take();
      expect(writer.count).toBe(0);
      // As it arrives inside a frame: after a header of any length.
      const framed = new Uint8Array(bytes.byteLength + 3);
      framed.set(bytes, 3);
      const { cmds, malformed } = decodeCommands(framed.subarray(3));
      expect(malformed).toEqual([]);
      expect(cmds).toHaveLength(5000);
      expect(cmds[4999]).toEqual({ op: 'dispatch', pass: 7, x: 4999, y: 1, z: 1 });
    }
  });

  it('makes a wrong field a malformed command with what was wrong, and runs the rest', () => {
    const { cmds, malformed } = decodeCommands(encodeCommands([
      { op: 'createBuffer', id: 1, size: -5, usage: 'lots' },
      { op: 'noSuchOp', id: 2 },
      { op: 'destroy', id: 0 },
      { op: 'mapAsync', rid: 9, id: 1, mode: 1, offset: 2 ** 53 },
      { op: 'pushErrorScope', filter: 'everything' },
      { op: 'setLabel', id: 3, label: 'x'.repeat(1025) },
      { op: 'createBindGroupLayout', id: 4, entries: [{ binding: -1, visibility: 4 }] },
      { op: 'writeBuffer', id: 5, offset: 0, data: { file: '../../etc/passwd', length: 4 } },
      { op: 'workDone', rid: 0.5 },
      { op: 'workDone', rid: 10 },
    ]));
    expect(cmds).toEqual([{ op: 'workDone', rid: 10 }]);
    expect(malformed.map((m) => m.message)).toEqual([
      'malformed command #0 (createBuffer): size: must be a whole number from 0 to 2^53 - 1',
      'malformed command #1 (opcode 0): no command has this opcode',
      'malformed command #2 (destroy): id: must be an object id (1 or more)',
      'malformed command #3 (mapAsync): offset: must be a whole number from 0 to 2^53 - 1',
      'malformed command #4 (pushErrorScope): filter: must be one of validation, out-of-memory, internal',
      'malformed command #5 (setLabel): label: is 1025 characters long, more than 1024',
      'malformed command #6 (createBindGroupLayout): entries: 0.binding: Too small: expected number to be >=0',
      "malformed command #7 (writeBuffer): data: '../../etc/passwd' is not a bulk file's name",
      'malformed command #8 (workDone): rid: must be a request id (1 or more)',
    ]);
    // What could be read of a malformed request: its reply is still owed.
    expect(malformed[3]).toMatchObject({ op: 'mapAsync', rid: 9, id: 1 });
    expect(requestIds({ cmds, malformed })).toEqual([10, 9]);
  });

  it('drops the rest of a batch whose record runs past its end, and refuses words that are not whole', () => {
    const bytes = encodeCommands([{ op: 'destroy', id: 1 }, { op: 'destroy', id: 2 }, { op: 'destroy', id: 3 }]);
    const cut = decodeCommands(bytes.subarray(0, bytes.byteLength - 4));
    expect(cut.cmds).toEqual([{ op: 'destroy', id: 1 }, { op: 'destroy', id: 2 }]);
    expect(cut.malformed[0].message).toMatch(/^malformed command #2 \(destroy\): its record of 2 words does not fit the 1 words left/);
    const words = new Uint32Array(bytes.buffer.slice(0));
    words[2] = (words[2] & 0xff) | (1 << 8); // a record that claims to be its header alone
    const short = decodeCommands(new Uint8Array(words.buffer));
    expect(short.malformed[0].message).toBe('malformed command #1 (destroy): id: the record ends before this field');
    expect(decodeCommands(bytes.subarray(0, 6)).malformed[0].message).toMatch(/not a whole number of 4-byte words/);
    words[2] = 0;
    expect(decodeCommands(new Uint8Array(words.buffer)).malformed[0].message).toMatch(/record of 0 words/);
  });

  it('refuses text that is not UTF-8 and words past the last field', () => {
    const bytes = encodeCommands([{ op: 'setLabel', id: 1, label: 'abcd' }]);
    bytes[12] = 0xff;
    expect(decodeCommands(bytes).malformed[0].message).toBe('malformed command #0 (setLabel): label: is not UTF-8');
    const long = new Uint32Array([2 | (3 << 8), 1, 0]);
    expect(decodeCommands(new Uint8Array(long.buffer)).malformed[0].message).toBe('malformed command #0 (useDevice): 1 words after the last field');
  });

  it('never throws on any bytes, and accounts for every record it can frame', () => {
    fc.assert(fc.property(fc.array(commandArbitrary, { minLength: 1, maxLength: 12 }), fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { maxLength: 6 }), (cmds, flips) => {
      const bytes = encodeCommands(cmds);
      for (const [at, value] of flips) bytes[at % bytes.byteLength] = value;
      const decoded = decodeCommands(bytes);
      expect(decoded.cmds.length + decoded.malformed.length).toBeLessThanOrEqual(cmds.length + bytes.byteLength / 4);
      for (const cmd of decoded.cmds) expect(OPS).toContain((cmd as Command).op);
    }), { numRuns: 1000 });
  });

  it('writes anything at all without throwing, as the bits a hostile peer could send', () => {
    fc.assert(fc.property(fc.array(fc.oneof(fc.anything(), fc.record({ op: fc.constantFrom(...OPS) }, { requiredKeys: [] }).chain((base) =>
      fc.dictionary(fc.constantFrom('id', 'size', 'label', 'entries', 'data', 'code', 'limits', 'x', 'rid', 'filter'), fc.anything()).map((rest) => ({ ...rest, ...base }))))), (cmds) => {
      const decoded = decodeCommands(encodeCommands(cmds as Record<string, unknown>[]));
      expect(decoded.cmds.length + decoded.malformed.length).toBe(cmds.length);
    }), { numRuns: 500 });
    expect(decodeCommands(encodeCommands([null as never, { op: 'setLabel', id: 1, label: Object.create(null) }, { op: 'configureDevice', features: [], limits: { a: 1n } }])).malformed.map((m) => m.message)).toEqual([
      'malformed command #0 (opcode 0): no command has this opcode',
      'malformed command #1 (setLabel): label: is missing',
      'malformed command #2 (configureDevice): limits: is not JSON',
    ]);
  });

  it('refuses to write a command larger than a record may be', () => {
    const writer = new CommandWriter();
    expect(() => writer.write({ op: 'createShaderModule', id: 1, code: 'x'.repeat(80 * 1024 * 1024) })).toThrow(/larger than a command may be/);
    expect(writer.count).toBe(0);
    writer.write({ op: 'destroy', id: 1 });
    expect(decodeCommands(writer.take()).cmds).toEqual([{ op: 'destroy', id: 1 }]);
  });
});
