/**
 * Per-op writers for the command stream, generated from the command table, as the decoders are
 * (commandCodec.ts): each reads its op's fields by name with loads that see one command shape, where the
 * table-walking writer (CommandWriter's generic path) looks each field's kind up and reads `cmd[name]` for
 * every op alike. An op gets one only when every field is of a kind written here (ids, u32s, optional u32s
 * and booleans, u64s and lists of u32s or ids); the others keep the generic path. Both write the same bytes:
 * test/unit/protocol/commandWriters.test.ts holds them equal over good and broken values of every such op.
 */
import type { FieldSpec } from './commandTable.js';

/** What a generated writer writes into: CommandWriter's buffer, position and count. */
export interface WriterTarget {
  words: Uint32Array;
  at: number;
  count: number;
  reserve(words: number): void;
}

export type OpWriter = (target: WriterTarget, cmd: Record<string, unknown>) => void;

/** The values a generated writer's code refers to. */
export interface WriterConstants {
  isU32(v: unknown): boolean;
  isU64(v: unknown): boolean;
  toNumber(v: unknown): number;
  ABSENT: number;
  BAD_U64_HIGH: number;
  TWO_32: number;
  MAX_RECORD_WORDS: number;
}

const FIXED_WORDS: Partial<Record<FieldSpec['kind'], number>> = {
  'id': 1, 'rid': 1, 'id?': 1, 'rid?': 1, 'idOrNull': 1, 'layout': 1, 'u32': 1, 'u32?': 2, 'bool?': 1, 'u64': 2, 'u64?': 2,
};
const LIST_KINDS = new Set<FieldSpec['kind']>(['u32s?', 'ids', 'idsOrNull']);

/** The statements writing one field (its value in `v`; `w` the words, `a` the position). */
function fieldCode(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'id': case 'rid': case 'id?': case 'rid?': case 'idOrNull': case 'layout':
      return 'w[a++] = c.isU32(v) ? v : 0;';
    case 'u32':
      return 'w[a++] = c.toNumber(v) >>> 0;';
    case 'u32?':
      return 'if (v === undefined) { w[a++] = 0; w[a++] = 0; } else { w[a++] = 1; w[a++] = c.toNumber(v) >>> 0; }';
    case 'bool?':
      return 'w[a++] = v === undefined ? 0 : v ? 2 : 1;';
    case 'u64': case 'u64?': {
      const absent = spec.kind === 'u64'
        ? 'w[a++] = 0; w[a++] = c.BAD_U64_HIGH;' // The generic path writes -1 for an absent u64: not a u64.
        : 'w[a++] = c.ABSENT; w[a++] = c.ABSENT;';
      return `if (v === undefined) { ${absent} } else if (c.isU64(v)) { w[a++] = v % c.TWO_32; w[a++] = Math.floor(v / c.TWO_32); } else { w[a++] = 0; w[a++] = c.BAD_U64_HIGH; }`;
    }
    case 'u32s?': case 'ids': case 'idsOrNull': {
      const each = spec.kind === 'u32s?' ? 'c.toNumber(x) >>> 0' : '(c.isU32(x) ? x : 0)';
      // The list's length is known only now: room for it, then back to the words array (reserve may replace it).
      return `if (!Array.isArray(v)) { w[a++] = 0; } else { t.at = a; t.reserve(1 + v.length + fixed); w = t.words; w[a++] = v.length; for (const x of v) w[a++] = ${each}; }`;
    }
    default:
      throw new Error(`no generated writer for a ${spec.kind} field`);
  }
}

/** A writer for `op` (opcode `code`) with these fields, or null when one of its fields is of a kind not written here. */
export function makeOpWriter(op: string, code: number, names: readonly string[], specs: readonly FieldSpec[], constants: WriterConstants): OpWriter | null {
  if (!specs.every((spec) => FIXED_WORDS[spec.kind] !== undefined || LIST_KINDS.has(spec.kind))) return null;
  const fixedWords = 1 + specs.reduce((sum, spec) => sum + (FIXED_WORDS[spec.kind] ?? 1), 0);
  const hasList = specs.some((spec) => LIST_KINDS.has(spec.kind));
  const body = [
    // Room for every fixed field, and again after each list (a list reserves its own words and the fixed ones after it).
    `const fixed = ${fixedWords}; t.reserve(fixed);`,
    'let w = t.words; let a = t.at; const start = a++; let v;',
    ...names.map((name, i) => `v = cmd[${JSON.stringify(name)}]; ${fieldCode(specs[i])}`),
    'const words = a - start;',
    ...(hasList ? [`if (words > c.MAX_RECORD_WORDS) { t.at = start; throw new RangeError(\`salus: a ${op} command of \${words * 4} bytes is larger than a command may be (\${c.MAX_RECORD_WORDS * 4} bytes)\`); }`] : []),
    `w[start] = ${code} | (words << 8);`,
    't.at = a; t.count++;',
  ];
  const make = new Function('c', `return function write(t, cmd) {\n${body.join('\n')}\n};`) as (c: WriterConstants) => OpWriter;
  return make(constants);
}
