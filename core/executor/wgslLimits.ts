/**
 * What a compute entry point needs of a device's limits, read from its WGSL:
 * its workgroup size and the workgroup storage it uses. The shared device has
 * the adapter's limits, larger than most jobs' own, so Dawn would accept a
 * pipeline that a local device made with the job's descriptor refuses; replay
 * checks these numbers against the job's limits. Sizes follow the WGSL spec's
 * layout rules (alignment and size of scalars, vectors, matrices, arrays,
 * structs with @align/@size) and WebGPU's sum over the variables the entry
 * point statically uses, each rounded up to 16 bytes. Anything not understood
 * (an expression past integer arithmetic, a name shadowing a variable, an
 * unknown type) gives null: then nothing is refused.
 */
import { stripComments } from './wgslAccess.js';

/** An entry point's needs; null fields could not be computed. */
export interface StageNeeds {
  workgroupSize: [number, number, number] | null;
  workgroupStorageBytes: number | null;
  /** Buffer bindings the entry point uses, by kind (what an 'auto' layout holds); null when unknown. */
  bufferBindings: { uniform: number; storage: number } | null;
}

interface Layout {
  size: number;
  align: number;
}

const roundUp = (k: number, n: number): number => Math.ceil(n / k) * k;

/** The module-scope declarations the analysis needs. */
export interface Module {
  code: string;
  /** const and override values by name (override ids too), after the pipeline's constants. */
  values: Map<string, string>;
  aliases: Map<string, string>;
  structs: Map<string, string>;
  workgroupVars: Map<string, string>;
  /** Module-scope buffer bindings, by variable name. */
  bufferVars: Map<string, 'uniform' | 'storage'>;
  /** Module-scope bindings of every kind (buffers, textures, samplers), by variable name. */
  resourceVars: Map<string, ResourceKind>;
  functions: Map<string, { attributes: string; params: string; body: string }>;
}

/** The text from `open` (an opening bracket's index) to its matching close, exclusive; null if unbalanced. */
export function balanced(code: string, open: number, left: string, right: string): { inner: string; end: number } | null {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === left) depth++;
    else if (code[i] === right && --depth === 0) return { inner: code.slice(open + 1, i), end: i + 1 };
  }
  return null;
}

/** The declarations of `source` the analyses need, with `constants` overriding its overrides; null when a bracket does not balance. */
export function parseModule(source: string, constants: Readonly<Record<string, number>>): Module | null {
  const code = stripComments(source);
  const module: Module = {
    code, values: new Map(), aliases: new Map(), structs: new Map(), workgroupVars: new Map(), bufferVars: new Map(), resourceVars: new Map(),
    functions: new Map(),
  };
  for (const m of code.matchAll(/\b(const|override)\s+([A-Za-z_]\w*)\s*(?::\s*[^=;]+?)?\s*(?:=\s*([^;]+))?;/g)) {
    const id = /@\s*id\s*\(\s*(\d+)[iu]?\s*\)\s*$/.exec(code.slice(Math.max(0, m.index - 40), m.index))?.[1];
    const given = m[1] === 'override' ? constants[m[2]] ?? (id === undefined ? undefined : constants[id]) : undefined;
    const value = given !== undefined ? String(given) : m[3];
    // A name declared twice (a function's const shadowing a module's) is not evaluated: '?' never is.
    if (value !== undefined) module.values.set(m[2], module.values.has(m[2]) ? '?' : value.trim());
  }
  for (const m of code.matchAll(/\balias\s+([A-Za-z_]\w*)\s*=\s*([^;]+);/g)) module.aliases.set(m[1], m[2].trim());
  for (const m of code.matchAll(/\bstruct\s+([A-Za-z_]\w*)\s*\{/g)) {
    const body = balanced(code, m.index + m[0].length - 1, '{', '}');
    if (!body) return null;
    module.structs.set(m[1], body.inner);
  }
  for (const m of code.matchAll(/\bvar\s*<\s*workgroup\s*>\s*([A-Za-z_]\w*)\s*:\s*([^;]+);/g)) module.workgroupVars.set(m[1], m[2].trim());
  for (const m of code.matchAll(/\bvar\s*<\s*(uniform|storage)\b[^>]*>\s*([A-Za-z_]\w*)/g)) module.bufferVars.set(m[2], m[1] as 'uniform' | 'storage');
  module.resourceVars = new Map(module.bufferVars);
  // Handles (no address space): textures and samplers.
  for (const m of code.matchAll(/\bvar\s+([A-Za-z_]\w*)\s*:\s*(texture_storage_|texture_|sampler)/g)) {
    module.resourceVars.set(m[1], m[2] === 'texture_storage_' ? 'storageTexture' : m[2] === 'texture_' ? 'sampledTexture' : 'sampler');
  }
  for (const m of code.matchAll(/\bfn\s+([A-Za-z_]\w*)\s*\(/g)) {
    const params = balanced(code, m.index + m[0].length - 1, '(', ')');
    if (!params) return null;
    const open = code.indexOf('{', params.end);
    const body = open < 0 ? null : balanced(code, open, '{', '}');
    if (!body) return null;
    // The attributes between the previous declaration's end and this `fn`.
    const before = code.slice(0, m.index);
    const attributes = before.slice(Math.max(before.lastIndexOf(';'), before.lastIndexOf('}')) + 1);
    module.functions.set(m[1], { attributes, params: params.inner, body: body.inner });
  }
  return module;
}

/** An integer const-expression of literals, consts, overrides and + - * / % ( ); null otherwise. */
function evaluate(expression: string, module: Module, depth = 0): number | null {
  if (depth > 16) return null;
  const tokens = expression.match(/0[xX][0-9a-fA-F]+[iu]?|\d+[iu]?|[A-Za-z_]\w*|[-+*/%()]|\S/g) ?? [];
  let at = 0;
  const primary = (): number | null => {
    const token = tokens[at++];
    if (token === undefined) return null;
    if (token === '(') {
      const value = sum();
      return tokens[at++] === ')' ? value : null;
    }
    if (token === '-') {
      const value = primary();
      return value === null ? null : -value;
    }
    if (/^(0[xX][0-9a-fA-F]+|\d+)[iu]?$/.test(token)) return Number.parseInt(token.replace(/[iu]$/, ''));
    if (/^[A-Za-z_]\w*$/.test(token) && module.values.has(token)) return evaluate(module.values.get(token)!, module, depth + 1);
    return null;
  };
  const product = (): number | null => {
    let value = primary();
    while (value !== null && ['*', '/', '%'].includes(tokens[at])) {
      const op = tokens[at++];
      const right = primary();
      if (right === null || (op !== '*' && right === 0)) return null;
      value = op === '*' ? value * right : op === '/' ? Math.trunc(value / right) : value % right;
    }
    return value;
  };
  const sum = (): number | null => {
    let value = product();
    while (value !== null && ['+', '-'].includes(tokens[at])) {
      const op = tokens[at++];
      const right = product();
      if (right === null) return null;
      value = op === '+' ? value + right : value - right;
    }
    return value;
  };
  const value = sum();
  return at === tokens.length && value !== null && Number.isSafeInteger(value) ? value : null;
}

/** Splits `a, b<c, d>, e` at its top-level commas. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if ('<(['.includes(text[i])) depth++;
    else if ('>)]'.includes(text[i])) depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

const SCALARS: Record<string, Layout> = { f32: { size: 4, align: 4 }, i32: { size: 4, align: 4 }, u32: { size: 4, align: 4 }, f16: { size: 2, align: 2 }, bool: { size: 4, align: 4 } };
const SHORT_SCALARS: Record<string, string> = { f: 'f32', i: 'i32', u: 'u32', h: 'f16' };

function vectorLayout(n: number, scalar: Layout): Layout {
  return { size: n * scalar.size, align: (n === 2 ? 2 : 4) * scalar.size };
}

/** The WGSL layout of `type`, or null when it cannot be told. */
function typeLayout(type: string, module: Module, depth = 0): Layout | null {
  if (depth > 32) return null;
  const t = type.trim();
  if (SCALARS[t]) return SCALARS[t];
  if (module.aliases.has(t)) return typeLayout(module.aliases.get(t)!, module, depth + 1);
  let m = /^vec([234])([fihu])$/.exec(t);
  if (m) return vectorLayout(Number(m[1]), SCALARS[SHORT_SCALARS[m[2]]]);
  m = /^mat([234])x([234])([fh])$/.exec(t);
  if (m) return typeLayout(`mat${m[1]}x${m[2]}<${SHORT_SCALARS[m[3]]}>`, module, depth + 1);
  m = /^(vec([234])|mat([234])x([234])|atomic|array)\s*<([\s\S]*)>$/.exec(t);
  if (m) {
    const args = splitTopLevel(m[5]);
    if (m[1] === 'atomic') return args.length === 1 && ['i32', 'u32'].includes(args[0]) ? { size: 4, align: 4 } : null;
    const element = args[0] === undefined ? null : typeLayout(args[0], module, depth + 1);
    if (!element) return null;
    if (m[2]) return args.length === 1 ? vectorLayout(Number(m[2]), element) : null;
    if (m[3]) {
      const column = vectorLayout(Number(m[4]), element);
      return args.length === 1 ? { size: Number(m[3]) * roundUp(column.align, column.size), align: column.align } : null;
    }
    // A runtime-sized array cannot live in workgroup storage; a count must be a const-expression.
    const count = args.length === 2 ? evaluate(args[1], module) : null;
    if (count === null || count <= 0) return null;
    return { size: count * roundUp(element.align, element.size), align: element.align };
  }
  if (module.structs.has(t)) return structLayout(module.structs.get(t)!, module, depth + 1);
  return null;
}

function structLayout(body: string, module: Module, depth: number): Layout | null {
  let offset = 0;
  let align = 1;
  for (const member of splitTopLevel(body)) {
    const m = /^((?:@\s*\w+\s*\([^)]*\)\s*)*)([A-Za-z_]\w*)\s*:\s*([\s\S]+)$/.exec(member);
    if (!m) return null;
    const type = typeLayout(m[3], module, depth);
    if (!type) return null;
    let memberAlign = type.align;
    let memberSize = type.size;
    for (const [, name, value] of m[1].matchAll(/@\s*(\w+)\s*\(([^)]*)\)/g)) {
      if (name !== 'align' && name !== 'size') continue;
      const n = evaluate(value, module);
      if (n === null) return null;
      if (name === 'align') memberAlign = n;
      else memberSize = n;
    }
    offset = roundUp(memberAlign, offset) + memberSize;
    align = Math.max(align, memberAlign);
  }
  return { size: roundUp(align, offset), align };
}

/** The names a function refers to (not members after `.`). */
export function identifiers(text: string): Set<string> {
  return new Set(text.match(/(?<![\w.])[A-Za-z_]\w*/g) ?? []);
}

/** `entry` and the functions it calls, directly or not. */
function reachedFunctions(module: Module, entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const id of identifiers(module.functions.get(name)!.body)) if (module.functions.has(id)) pending.push(id);
  }
  return seen;
}

/** The module-scope variables of `vars` that `entry` uses, through the functions it calls; null when a local name may shadow one. */
function usedVars(module: Module, entry: string, vars: ReadonlyMap<string, unknown>): Set<string> | null {
  const used = new Set<string>();
  for (const name of reachedFunctions(module, entry)) {
    const fn = module.functions.get(name)!;
    const declared = identifiers(`${fn.params} ${[...fn.body.matchAll(/\b(?:let|var|const)\s*(?:<[^>]*>)?\s*([A-Za-z_]\w*)/g)].map((m) => m[1]).join(' ')}`);
    for (const id of identifiers(fn.body)) {
      if (!vars.has(id)) continue;
      if (declared.has(id)) return null;
      used.add(id);
    }
  }
  return used;
}

/**
 * What `entryPoint` (the module's only compute entry point when undefined)
 * needs, with `constants` as the pipeline overrides them; null when the module
 * cannot be read well enough to say anything.
 */
export function computeStageNeeds(source: string, entryPoint: string | undefined, constants: Readonly<Record<string, number>> = {}): StageNeeds | null {
  const module = parseModule(source, constants);
  if (!module) return null;
  const computeEntries = [...module.functions].filter(([, fn]) => /@\s*compute\b/.test(fn.attributes)).map(([name]) => name);
  const entry = entryPoint ?? (computeEntries.length === 1 ? computeEntries[0] : undefined);
  if (entry === undefined || !computeEntries.includes(entry)) return null;
  const attributes = module.functions.get(entry)!.attributes;
  let workgroupSize: StageNeeds['workgroupSize'] = null;
  const open = /@\s*workgroup_size\s*\(/.exec(attributes);
  const args = open ? balanced(attributes, open.index + open[0].length - 1, '(', ')') : null;
  if (args) {
    const dims = splitTopLevel(args.inner).map((a) => evaluate(a, module));
    if (dims.length >= 1 && dims.length <= 3 && dims.every((d) => d !== null)) {
      workgroupSize = [dims[0]!, dims[1] ?? 1, dims[2] ?? 1];
    }
  }
  let workgroupStorageBytes: number | null = 0;
  const used = usedVars(module, entry, module.workgroupVars);
  for (const name of used ?? []) {
    const layout = typeLayout(module.workgroupVars.get(name)!, module);
    if (!layout || workgroupStorageBytes === null) {
      workgroupStorageBytes = null;
      break;
    }
    workgroupStorageBytes += roundUp(16, layout.size);
  }
  const usedBuffers = usedVars(module, entry, module.bufferVars);
  let bufferBindings: StageNeeds['bufferBindings'] = null;
  if (usedBuffers) {
    bufferBindings = { uniform: 0, storage: 0 };
    for (const name of usedBuffers) bufferBindings[module.bufferVars.get(name)!]++;
  }
  return { workgroupSize, workgroupStorageBytes: used ? workgroupStorageBytes : null, bufferBindings };
}

/** The kinds of binding a shader stage uses, counted against the per-stage limits. */
export type ResourceKind = 'uniform' | 'storage' | 'sampledTexture' | 'storageTexture' | 'sampler';

/**
 * The bindings `entryPoint` (a `stage` entry point; the module's only one when undefined) uses, by kind: what an
 * 'auto' layout holds for that stage. Null when the module cannot be read well enough to say.
 */
export function stageResources(
  source: string, entryPoint: string | undefined, stage: 'vertex' | 'fragment' | 'compute', constants: Readonly<Record<string, number>> = {},
): Record<ResourceKind, number> | null {
  const module = parseModule(source, constants);
  if (!module) return null;
  const entries = [...module.functions].filter(([, fn]) => new RegExp(`@\\s*${stage}\\b`).test(fn.attributes)).map(([name]) => name);
  const entry = entryPoint ?? (entries.length === 1 ? entries[0] : undefined);
  if (entry === undefined || !entries.includes(entry)) return null;
  const used = usedVars(module, entry, module.resourceVars);
  if (!used) return null;
  const counts: Record<ResourceKind, number> = { uniform: 0, storage: 0, sampledTexture: 0, storageTexture: 0, sampler: 0 };
  for (const name of used) counts[module.resourceVars.get(name)!]++;
  return counts;
}

/** Fragment inputs that count against maxInterStageShaderVariables as one variable each. */
const COUNTED_FRAGMENT_BUILTINS = /@\s*builtin\s*\(\s*(front_facing|sample_index|sample_mask|primitive_index|subgroup_invocation_id|subgroup_size)\s*\)/g;

/**
 * The inter-stage variables `entryPoint` (a vertex or fragment entry point; the only one when undefined) passes:
 * a vertex stage's @location outputs, a fragment stage's @location inputs plus its inputs among the builtins that
 * count (front_facing, sample_index, sample_mask, primitive_index, subgroup_*). Through structs one level deep,
 * as WGSL allows. Null when the module cannot be read well enough to say.
 */
export function interStageVariables(source: string, entryPoint: string | undefined, stage: 'vertex' | 'fragment'): number | null {
  const module = parseModule(source, {});
  if (!module) return null;
  const entries = [...module.functions].filter(([, fn]) => new RegExp(`@\\s*${stage}\\b`).test(fn.attributes)).map(([name]) => name);
  const entry = entryPoint ?? (entries.length === 1 ? entries[0] : undefined);
  if (entry === undefined || !entries.includes(entry)) return null;
  const fn = module.functions.get(entry)!;
  // The text that declares the variables: the return type's (vertex) or the parameters' (fragment), with their structs' bodies.
  let text: string;
  if (stage === 'vertex') {
    const declared = new RegExp(`\\bfn\\s+${entry}\\s*\\(`).exec(module.code);
    const params = declared ? balanced(module.code, declared.index + declared[0].length - 1, '(', ')') : null;
    if (!params) return null;
    text = /^\s*->\s*([^{]*)\{/.exec(module.code.slice(params.end))?.[1] ?? '';
  } else {
    text = fn.params;
  }
  for (const name of text.match(/[A-Za-z_]\w*/g) ?? []) text += ` ${module.structs.get(name) ?? ''}`;
  const locations = text.match(/@\s*location\s*\(/g)?.length ?? 0;
  return locations + (stage === 'fragment' ? text.match(COUNTED_FRAGMENT_BUILTINS)?.length ?? 0 : 0);
}

/**
 * The buffer bindings `source` declares, `group:binding` to `uniform` or
 * `storage`; null when one cannot be read (an attribute that is not a number).
 */
export function bufferBindingKinds(source: string): Map<string, 'uniform' | 'storage'> | null {
  const code = stripComments(source);
  const kinds = new Map<string, 'uniform' | 'storage'>();
  const declaration = /((?:@\s*(?:group|binding)\s*\(\s*[^)]*\)\s*){2})var\s*<\s*(storage|uniform)\b/g;
  for (const m of code.matchAll(declaration)) {
    const group = /@\s*group\s*\(\s*(\d+)[iu]?\s*\)/.exec(m[1])?.[1];
    const binding = /@\s*binding\s*\(\s*(\d+)[iu]?\s*\)/.exec(m[1])?.[1];
    if (group === undefined || binding === undefined) return null;
    kinds.set(`${Number(group)}:${Number(binding)}`, m[2] as 'uniform' | 'storage');
  }
  return kinds;
}
