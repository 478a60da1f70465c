import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { commandSchema, isWellFormedCommand, type Command } from '../../../core/protocol/commands.js';
import { compileFastCheck } from '../../../core/protocol/fastCheck.js';
import { prng } from '../../helpers/prng.js';
import { isWellFormedJobMessage, jobMessageSchema } from '../../../core/protocol/messages.js';

/** One well-formed command of every op. */
const SAMPLES: Command[] = [
  { op: 'configureDevice', features: ['timestamp-query'], limits: { maxBufferSize: 1024 } },
  { op: 'createBuffer', id: 3, size: 256, usage: 132, mappedAtCreation: true, label: 'loss' },
  { op: 'createBuffer', id: 4, size: 0, usage: 8 },
  { op: 'destroy', id: 3 },
  { op: 'release', id: 9 },
  { op: 'writeBuffer', id: 3, offset: 0, data: [0, 16] },
  { op: 'writeBuffer', id: 3, offset: 64, data: { file: 'job-1-7', length: 4096 } },
  { op: 'mapAsync', rid: 2, id: 3, mode: 1, offset: 0 },
  { op: 'mapAsync', rid: 2, id: 3, mode: 1, offset: 0, size: 16 },
  { op: 'readMapped', rid: 5, id: 3, offset: 0, size: 64 },
  { op: 'writeMapped', id: 3, offset: 8, data: [16, 8] },
  { op: 'unmap', id: 3 },
  { op: 'createShaderModule', id: 5, code: '@compute @workgroup_size(1) fn main() {}', label: 'k' },
  { op: 'compilationInfo', rid: 6, id: 5 },
  { op: 'createBindGroupLayout', id: 6, entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage' } }] },
  { op: 'createPipelineLayout', id: 7, bindGroupLayouts: [6, null] },
  { op: 'createComputePipeline', id: 8, rid: 9, layout: 'auto', module: 5, entryPoint: 'main', constants: { n: 2 } },
  { op: 'createComputePipeline', id: 8, layout: 7, module: 5 },
  { op: 'getBindGroupLayout', id: 10, pipeline: 8, index: 0 },
  { op: 'createBindGroup', id: 11, layout: 10, entries: [{ binding: 0, buffer: 3 }, { binding: 1, buffer: 4, offset: 256, size: 64 }] },
  { op: 'createQuerySet', id: 12, type: 'timestamp', count: 2 },
  { op: 'createCommandEncoder', id: 13, label: 'step 1' },
  { op: 'beginComputePass', id: 14, encoder: 13, timestampWrites: { querySet: 12, endOfPassWriteIndex: 1 } },
  { op: 'setPipeline', pass: 14, pipeline: 8 },
  { op: 'setBindGroup', pass: 14, index: 0, bindGroup: 11, dynamicOffsets: [256] },
  { op: 'setBindGroup', pass: 14, index: 1, bindGroup: null },
  { op: 'dispatch', pass: 14, x: 4, y: 1, z: 1 },
  { op: 'dispatchIndirect', pass: 14, buffer: 4, offset: 0 },
  { op: 'endPass', pass: 14 },
  { op: 'debugMarker', target: 13, kind: 'insert', label: 'here' },
  { op: 'copyBufferToBuffer', encoder: 13, src: 3, srcOffset: 0, dst: 4, dstOffset: 0, size: 16 },
  { op: 'clearBuffer', encoder: 13, buffer: 4 },
  { op: 'resolveQuerySet', encoder: 13, querySet: 12, first: 0, count: 2, dst: 4, dstOffset: 0 },
  { op: 'finish', encoder: 13, id: 15 },
  { op: 'submit', commandBuffers: [15] },
  { op: 'workDone', rid: 16 },
  { op: 'pushErrorScope', filter: 'out-of-memory' },
  { op: 'popErrorScope', rid: 17 },
  { op: 'setLabel', id: 3, label: 'renamed' },
  { op: 'destroyDevice' },
  { op: 'iterationBegin' },
  { op: 'iterationEnd', rid: 18 },
];

/** Ops whose schema has a part the fast path leaves to zod (a record, a passthrough object): rare, setup-time ops. */
const LEFT_TO_ZOD = new Set(['configureDevice', 'createBindGroupLayout', 'createComputePipeline']);

/** Values that break one rule or another. */
const ODD_VALUES: unknown[] = [
  -1, 0, -0, 1.5, 2 ** 32, 2 ** 32 - 1, 2 ** 53, Number.MAX_SAFE_INTEGER, '', 'x'.repeat(1025), 'auto', 'validation',
  'job-1-2', 'job-1-x', null, true, [], [1], [1, 2], [1, 2, 3], [-1, 2], {}, { file: 'job-1-2', length: 3 }, { buffer: 3 },
  [{ binding: 0, buffer: 3 }], [{ binding: 0, buffer: 3, extra: 1 }], [{ binding: -1, buffer: 3 }],
];

function mutate(cmd: Record<string, unknown>, rand: () => number): Record<string, unknown> {
  const out = structuredClone(cmd);
  const keys = Object.keys(out);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];
  const edits = 1 + Math.floor(rand() * 2);
  for (let n = 0; n < edits; n++) {
    const what = rand();
    if (what < 0.15 && keys.length > 1) delete out[pick(keys.filter((k) => k !== 'op'))];
    else if (what < 0.25) out[pick(['extra', 'constructor', '__proto__', 'labels'])] = pick(ODD_VALUES);
    else if (what < 0.35) out.op = pick(SAMPLES).op;
    else out[pick(keys)] = pick(ODD_VALUES);
  }
  return out;
}

describe('fast command check', () => {
  it('accepts every well-formed command of the hot ops, and zod agrees', () => {
    for (const cmd of SAMPLES) {
      expect(commandSchema.safeParse(cmd).success, cmd.op).toBe(true);
      expect(isWellFormedCommand(cmd), cmd.op).toBe(!LEFT_TO_ZOD.has(cmd.op));
    }
  });

  it('accepts only what zod accepts unchanged, over 20000 mutated commands', () => {
    const rand = prng(7);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const mutant = mutate(SAMPLES[i % SAMPLES.length] as Record<string, unknown>, rand);
      // As it would arrive: through JSON.
      const wire = JSON.parse(JSON.stringify(mutant)) as unknown;
      if (!isWellFormedCommand(wire)) {
        refused++;
        continue;
      }
      accepted++;
      const parsed = commandSchema.safeParse(wire);
      expect(parsed.success, JSON.stringify(wire)).toBe(true);
      expect(parsed.data, JSON.stringify(wire)).toEqual(wire);
    }
    // Both sides of the check were exercised.
    expect(accepted).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });

  it('passes batches of a job\'s messages, and nothing zod would change', () => {
    const messages: unknown[] = [
      { t: 'batch', cmds: [{ op: 'anything' }, 3] }, { t: 'goodbye', exitCode: 1 }, { t: 'batch', cmds: 'no' },
      { t: 'batch', cmds: [], extra: 1 }, { t: 'goodbye', exitCode: 1.5 }, { t: 'requestDevice', rid: 1 }, { t: 'nope' }, null, [],
    ];
    expect(messages.map((m) => isWellFormedJobMessage(m))).toEqual([true, true, false, false, false, false, false, false, false]);
    for (const message of messages.filter((m) => isWellFormedJobMessage(m))) expect(jobMessageSchema.parse(message)).toEqual(message);
  });

  it('refuses unknown keys, which zod would strip', () => {
    expect(isWellFormedCommand({ op: 'destroy', id: 3, extra: true })).toBe(false);
    expect(commandSchema.parse({ op: 'destroy', id: 3, extra: true })).toEqual({ op: 'destroy', id: 3 });
  });

  it('reads number bounds and integer checks from the schema', () => {
    const check = compileFastCheck(z.number().int().positive().lt(10))!;
    expect([1, 9].map(check)).toEqual([true, true]);
    expect([0, 10, 1.5, -3, Number.NaN, Infinity, '1'].map(check)).toEqual([false, false, false, false, false, false, false]);
    const real = compileFastCheck(z.number().gte(-1).max(2))!;
    expect([-1, 0.5, 2].map(real)).toEqual([true, true, true]);
    expect([-1.01, 2.01].map(real)).toEqual([false, false]);
  });

  it('leaves to zod the parts it does not know', () => {
    expect(compileFastCheck(z.record(z.string(), z.number()))).toBeNull();
    expect(compileFastCheck(z.object({ a: z.number() }).passthrough())).toBeNull();
    expect(compileFastCheck(z.object({ a: z.number().default(1) }))).toBeNull();
    expect(compileFastCheck(z.string().transform((s) => s.length))).toBeNull();
    expect(compileFastCheck(z.number().multipleOf(2))).toBeNull();
    expect(compileFastCheck(z.string().email())).toBeNull();
    expect(compileFastCheck(z.array(z.record(z.string(), z.string())))).toBeNull();
  });
});

describe('compileFastCheck on definitions it does not expect', () => {
  it('gives no fast path rather than failing', () => {
    const odd = { _zod: { def: { type: 'enum' } } } as unknown as z.ZodType;
    expect(compileFastCheck(odd)).toBeNull();
    const oddObject = { _zod: { def: { type: 'object' } } } as unknown as z.ZodType;
    expect(compileFastCheck(oddObject)).toBeNull();
  });
});
