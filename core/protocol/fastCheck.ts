/**
 * A fast path for schema checks on the hot path (every command of every batch).
 *
 * `compileFastCheck(schema)` reads a zod schema's own definition and builds a
 * plain-JS predicate from it, for the simple parts commands are made of:
 * numbers with integer and range checks, strings with a length limit or a
 * pattern, booleans, unknowns, literals, enums, optional and nullable values, arrays with
 * a length limit, tuples, unions, plain objects and discriminated unions. A part
 * it does not know (a record, a passthrough object, a refinement, a transform,
 * a default) compiles to null, and so does everything that contains it.
 *
 * Contract: the predicate returns true only for values zod accepts *unchanged*
 * (an object with keys zod would strip is refused). It may refuse a value zod
 * accepts; callers then ask zod, which has the last word and the error message.
 * test/unit/protocol/fastCheck.test.ts holds it to that against zod itself.
 *
 * Relies on zod 4's definitions (`schema._zod.def`); a zod upgrade that changes
 * them makes parts compile to null (slower, never wrong) and that test fail.
 */
import type { z } from 'zod';

/** A compiled check: true means zod would accept the value as it is. */
export type FastCheck = (value: unknown) => boolean;

interface Def {
  type: string;
  checks?: { _zod: { def: CheckDef } }[];
  [key: string]: unknown;
}

interface CheckDef {
  check: string;
  format?: string;
  value?: number;
  inclusive?: boolean;
  maximum?: number;
  pattern?: RegExp;
}

const defOf = (schema: unknown): Def => (schema as { _zod: { def: Def } })._zod.def;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds the fast check for `schema`, or null when some part of it is not one this file knows. */
export function compileFastCheck(schema: z.ZodType): FastCheck | null {
  try {
    return compile(defOf(schema));
  } catch {
    // A definition of a shape this file does not expect (another zod): no fast path, zod does it all.
    return null;
  }
}

function compile(def: Def): FastCheck | null {
  switch (def.type) {
    case 'number': return compileNumber(def);
    case 'string': return compileString(def);
    case 'boolean': return noChecks(def) ? (v) => typeof v === 'boolean' : null;
    case 'unknown': return noChecks(def) ? () => true : null;
    case 'literal': {
      const values = new Set(def.values as unknown[]);
      return (v) => values.has(v);
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries as Record<string, unknown>));
      return (v) => values.has(v);
    }
    case 'optional': {
      const inner = compile(defOf(def.innerType));
      return inner && ((v) => v === undefined || inner(v));
    }
    case 'nullable': {
      const inner = compile(defOf(def.innerType));
      return inner && ((v) => v === null || inner(v));
    }
    case 'array': return compileArray(def);
    case 'tuple': return compileTuple(def);
    case 'union': return compileUnion(def);
    case 'object': return compileObject(def);
    default: return null;
  }
}

function noChecks(def: Def): boolean {
  return !def.checks || def.checks.length === 0;
}

function compileNumber(def: Def): FastCheck | null {
  let integer = false;
  let min = -Infinity;
  let minInclusive = true;
  let max = Infinity;
  let maxInclusive = true;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'number_format' && c.format === 'safeint') integer = true;
    else if (c.check === 'greater_than' && typeof c.value === 'number') [min, minInclusive] = [c.value, c.inclusive === true];
    else if (c.check === 'less_than' && typeof c.value === 'number') [max, maxInclusive] = [c.value, c.inclusive === true];
    else return null;
  }
  return (v) => typeof v === 'number'
    && (integer ? Number.isSafeInteger(v) : Number.isFinite(v))
    && (minInclusive ? v >= min : v > min)
    && (maxInclusive ? v <= max : v < max);
}

function compileString(def: Def): FastCheck | null {
  let maxLength = Infinity;
  let pattern: RegExp | null = null;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'max_length' && typeof c.maximum === 'number') maxLength = c.maximum;
    else if (c.check === 'string_format' && c.format === 'regex' && c.pattern instanceof RegExp && !c.pattern.global && !c.pattern.sticky) pattern = c.pattern;
    else return null;
  }
  return (v) => typeof v === 'string' && v.length <= maxLength && (pattern === null || pattern.test(v));
}

function compileArray(def: Def): FastCheck | null {
  let maxLength = Infinity;
  for (const check of def.checks ?? []) {
    const c = check._zod.def;
    if (c.check === 'max_length' && typeof c.maximum === 'number') maxLength = c.maximum;
    else return null;
  }
  const element = compile(defOf(def.element));
  if (!element) return null;
  return (v) => {
    if (!Array.isArray(v) || v.length > maxLength) return false;
    for (const item of v) if (!element(item)) return false;
    return true;
  };
}

function compileTuple(def: Def): FastCheck | null {
  if (def.rest || !noChecks(def)) return null;
  const items = (def.items as unknown[]).map((item) => compile(defOf(item)));
  if (items.some((item) => item === null)) return null;
  const checks = items as FastCheck[];
  return (v) => Array.isArray(v) && v.length === checks.length && checks.every((check, i) => check(v[i]));
}

function compileUnion(def: Def): FastCheck | null {
  if (!noChecks(def)) return null;
  if (typeof def.discriminator === 'string') return compileDiscriminated(def, def.discriminator);
  const options = (def.options as unknown[]).map((option) => compile(defOf(option)));
  if (options.some((option) => option === null)) return null;
  const checks = options as FastCheck[];
  return (v) => checks.some((check) => check(v));
}

/**
 * One check per discriminator value; options that do not compile are left out
 * (their values always go to zod), so the hot commands are fast even when a
 * rare one is not.
 */
function compileDiscriminated(def: Def, key: string): FastCheck {
  const byValue = new Map<unknown, FastCheck>();
  for (const option of def.options as unknown[]) {
    const optionDef = defOf(option);
    const check = compile(optionDef);
    const literal = optionDef.type === 'object' ? defOf((optionDef.shape as Record<string, unknown>)[key]) : null;
    if (!check || literal?.type !== 'literal') continue;
    for (const value of literal.values as unknown[]) if (!byValue.has(value)) byValue.set(value, check);
  }
  return (v) => {
    if (!isPlainObject(v)) return false;
    const check = byValue.get(v[key]);
    return check !== undefined && check(v);
  };
}

function compileObject(def: Def): FastCheck | null {
  // A catchall (passthrough, strict) changes what zod does with unknown keys: leave it to zod.
  if (def.catchall !== undefined || !noChecks(def)) return null;
  const shape = def.shape as Record<string, unknown>;
  const fields: [string, FastCheck][] = [];
  for (const [key, field] of Object.entries(shape)) {
    const check = compile(defOf(field));
    if (!check) return null;
    fields.push([key, check]);
  }
  const known = new Set(Object.keys(shape));
  return (v) => {
    if (!isPlainObject(v)) return false;
    // zod would strip unknown keys, so the value would not be accepted unchanged.
    for (const key in v) if (!known.has(key)) return false;
    for (const [key, check] of fields) if (!check(v[key])) return false;
    return true;
  };
}
