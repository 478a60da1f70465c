// The generated per-op writers (core/protocol/commandWriters.ts) against the writer that walks the command table:
// the same bytes for every op that has one, over good values and the broken ones a hostile or buggy client sends.
import { describe, expect, it } from 'vitest';
import { CommandWriter, decodeCommands, generatedWriterOps } from '../../../core/protocol/commandCodec.js';
import { COMMANDS, type CommandOp } from '../../../core/protocol/commandTable.js';

/** Values of every kind a field may be given: in range, at the edges, of the wrong type, missing. */
const VALUES: unknown[] = [
  0, 1, 7, 255, 65536, 0xffffffff, 2 ** 32, 2 ** 40, 2 ** 53 - 1, 2 ** 53, -1, -0, 1.5, NaN, Infinity, -Infinity,
  undefined, null, true, false, '', '12', 'x', {}, [], [1, 2, 3], [0xffffffff, -1, 'a', null, 2.5], new Uint32Array([1, 2]),
];

/** A seeded sequence (the same cases each run). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function bytesOf(write: (writer: CommandWriter) => void): number[] {
  const writer = new CommandWriter();
  write(writer);
  return [...writer.take()];
}

describe('generated command writers', () => {
  const ops = generatedWriterOps();

  it('exist for the hot ops of a training step and an awaited call', () => {
    for (const op of ['setPipeline', 'setBindGroup', 'dispatch', 'endPass', 'submit', 'workDone', 'destroy', 'release'] as CommandOp[]) {
      expect(ops).toContain(op);
    }
    // Ops with strings, descriptors or data keep the table's writer.
    expect(ops).not.toContain('createBindGroup');
    expect(ops).not.toContain('writeBuffer');
  });

  it('write the same bytes as the table for every op that has one, whatever the field values', () => {
    const random = seeded(19);
    const pick = () => VALUES[Math.floor(random() * VALUES.length)];
    let compared = 0;
    for (const op of ops) {
      const names = Object.keys(COMMANDS[op].fields);
      for (let round = 0; round < 200; round++) {
        const cmd: Record<string, unknown> = { op };
        for (const name of names) if (random() < 0.9) cmd[name] = pick();
        const generated = bytesOf((w) => w.write(cmd));
        const byTable = bytesOf((w) => w.writeByTable(cmd));
        expect(generated, `${op} ${JSON.stringify(cmd)}`).toEqual(byTable);
        compared++;
      }
    }
    expect(compared).toBe(ops.length * 200);
  });

  it('keep a batch decodable when long lists grow the buffer mid-record, and keep count', () => {
    const writer = new CommandWriter();
    const ids = Array.from({ length: 5000 }, (_, i) => i + 1);
    writer.write({ op: 'submit', commandBuffers: ids });
    writer.write({ op: 'setBindGroup', pass: 3, index: 1, bindGroup: 4, dynamicOffsets: [256, 512] });
    writer.write({ op: 'dispatch', pass: 3, x: 2, y: 1, z: 1 });
    expect(writer.count).toBe(3);
    const batch = decodeCommands(writer.take());
    expect(batch.malformed).toEqual([]);
    expect(batch.cmds).toEqual([
      { op: 'submit', commandBuffers: ids },
      { op: 'setBindGroup', pass: 3, index: 1, bindGroup: 4, dynamicOffsets: [256, 512] },
      { op: 'dispatch', pass: 3, x: 2, y: 1, z: 1 },
    ]);
  });
});
