/**
 * The session calls each observer only for the ops it lists (core/executor/opFlags.ts). A case added to an
 * observer's code without its list entry would never be called, silently: these tests read each observer's
 * source and hold the ops it tests for equal to its list.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../core/protocol/commands.js';
import { WORKING_SET_OPS } from '../../../core/executor/workingSet.js';
import { BIND_GROUP_SOURCE_OPS } from '../../../core/executor/residency.js';

const source = (file: string) => readFileSync(new URL(`../../../core/executor/${file}`, import.meta.url), 'utf8');

/** The text of method `name` of a class in `text`: from its signature to the next member at the same indent. */
function methodBody(text: string, signature: RegExp): string {
  const start = text.search(signature);
  expect(start, `method ${signature} not found`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(start + 1);
  const next = rest.search(/\n {2}(private |readonly |[a-zA-Z]+\()/);
  return next < 0 ? rest : rest.slice(0, next);
}

const sorted = (ops: Iterable<string>) => [...new Set(ops)].sort();

describe('observed ops', () => {
  it("lists exactly the ops the working set's observe handles", () => {
    const text = source('workingSet.ts');
    // Ops found by opcode: `const NAME = COMMANDS.op.code;` then `case NAME:` in observe.
    const codeNames = new Map([...text.matchAll(/const (\w+) = COMMANDS\.(\w+)\.code;/g)].map((m) => [m[1], m[2]]));
    const byCode = [...methodBody(text, /\n {2}observe\(cmd/).matchAll(/case (\w+):/g)].map((m) => codeNames.get(m[1]));
    expect(byCode).not.toContain(undefined);
    const byName = [...methodBody(text, /\n {2}private observeOther\(/).matchAll(/case '(\w+)':/g)].map((m) => m[1]);
    expect(byName.length).toBeGreaterThan(10);
    expect(sorted(WORKING_SET_OPS)).toEqual(sorted([...(byCode as string[]), ...byName]));
  });

  it('lists exactly the ops the bind group sources observe', () => {
    const body = methodBody(source('residency.ts'), /\n {2}observe\(cmd/);
    const tested = [...body.matchAll(/cmd\.op [!=]== '(\w+)'/g)].map((m) => m[1]);
    expect(sorted(BIND_GROUP_SOURCE_OPS)).toEqual(sorted(tested));
  });

  it('names only ops of the command table', () => {
    for (const op of [...WORKING_SET_OPS, ...BIND_GROUP_SOURCE_OPS]) expect(Object.hasOwn(COMMANDS, op), op).toBe(true);
  });
});
