/**
 * Which f32 textures an entry point samples with a filtering `sampler`, read
 * from its WGSL: those an 'auto' layout binds as filterable 'float' (WebGPU's
 * default pipeline layout; Tint pairs each texture with the samplers it meets
 * in a sampling builtin, following both through function parameters to the
 * module-scope variables a call passes). Anything not understood gives null,
 * and then nothing is refused.
 */
import { balanced, parseModule, splitTopLevel, type Module } from './wgslLimits.js';

/** The texture builtins that take a sampler (the comparison ones take a sampler_comparison, never a `sampler`). */
const SAMPLING_BUILTINS = new Set([
  'textureSample', 'textureSampleBias', 'textureSampleLevel', 'textureSampleGrad', 'textureSampleBaseClampToEdge', 'textureGather',
]);
const F32_TEXTURE = /((?:@\s*(?:group|binding)\s*\(\s*[^)]*\)\s*){2})var\s+([A-Za-z_]\w*)\s*:\s*texture_(?:1d|2d|2d_array|cube|cube_array|3d)\s*<\s*f32\s*>/g;
const CALL = /(?<![\w.])([A-Za-z_]\w*)\s*\(/g;
/** Function instances (a function with one assignment of handles to its parameters) read at most, per entry point. */
const MOST_INSTANCES = 4096;

/** A parameter's or module-scope variable's handle: the module-scope texture or sampler it stands for, or null for anything else. */
type Handles = ReadonlyMap<string, string | null>;

/** The parameter names of a function, in order. */
function parameterNames(params: string): string[] {
  return splitTopLevel(params).map((p) => /([A-Za-z_]\w*)\s*:/.exec(p.replace(/@\s*\w+\s*(\([^)]*\))?/g, ''))?.[1] ?? '');
}

/**
 * The f32 sampled textures, as `group:binding`, that `entryPoint` (a `stage` entry point; the module's only one
 * when undefined) passes to a sampling builtin together with a module-scope `sampler`, in its body or a function
 * it calls, directly or through function parameters. Null when the module cannot be read well enough to say.
 */
export function filterableTextureBindings(
  source: string, entryPoint: string | undefined, stage: 'vertex' | 'fragment' | 'compute', constants: Readonly<Record<string, number>> = {},
): Set<string> | null {
  const module = parseModule(source, constants);
  if (!module) return null;
  const entries = [...module.functions].filter(([, fn]) => new RegExp(`@\\s*${stage}\\b`).test(fn.attributes)).map(([name]) => name);
  const entry = entryPoint ?? (entries.length === 1 ? entries[0] : undefined);
  if (entry === undefined || !entries.includes(entry)) return null;
  const textures = new Map<string, string>();
  for (const m of module.code.matchAll(F32_TEXTURE)) {
    const group = /@\s*group\s*\(\s*(\d+)[iu]?\s*\)/.exec(m[1])?.[1];
    const binding = /@\s*binding\s*\(\s*(\d+)[iu]?\s*\)/.exec(m[1])?.[1];
    if (group === undefined || binding === undefined) return null;
    textures.set(m[2], `${Number(group)}:${Number(binding)}`);
  }
  const samplers = new Set([...module.code.matchAll(/\bvar\s+([A-Za-z_]\w*)\s*:\s*sampler\s*;/g)].map((m) => m[1]));
  const globals = new Map([...[...textures.keys(), ...samplers].map((name): [string, string] => [name, name])]);
  const filterable = new Set<string>();
  const walk = new SamplingWalk(module, globals, samplers, (texture) => {
    const key = textures.get(texture);
    if (key) filterable.add(key);
  });
  return walk.visit(entry, new Map()) ? filterable : null;
}

/** Walks the call graph from an entry point, each function with the handles its parameters stand for at that call. */
class SamplingWalk {
  private readonly seen = new Set<string>();

  constructor(
    private readonly module: Module,
    /** The module-scope textures and samplers, each standing for itself. */
    private readonly globals: Handles,
    private readonly samplers: ReadonlySet<string>,
    private readonly onSampled: (texture: string) => void,
  ) {}

  /** Reads function `name`, its parameters standing for `params`; false when something could not be told. */
  visit(name: string, params: Handles): boolean {
    const key = `${name}(${[...params].join(';')})`;
    if (this.seen.has(key)) return true;
    if (this.seen.size >= MOST_INSTANCES) return false;
    this.seen.add(key);
    const handles = new Map([...this.globals, ...params]);
    const body = this.module.functions.get(name)!.body;
    // Handles live only in module-scope variables and parameters: a local of the same name hides one from this reading.
    for (const m of body.matchAll(/\b(?:let|var|const)\s*(?:<[^>]*>)?\s*([A-Za-z_]\w*)/g)) if (handles.has(m[1])) return false;
    for (const call of body.matchAll(CALL)) {
      const callee = call[1];
      const sampling = SAMPLING_BUILTINS.has(callee);
      if (!sampling && !this.module.functions.has(callee)) continue;
      const args = balanced(body, call.index + call[0].length - 1, '(', ')');
      if (!args) return false;
      const passed = splitTopLevel(args.inner).map((arg) => handles.get(arg) ?? null);
      if (sampling) {
        if (passed.some((handle) => handle !== null && this.samplers.has(handle))) for (const handle of passed) if (handle) this.onSampled(handle);
        continue;
      }
      const calleeParams = parameterNames(this.module.functions.get(callee)!.params).map((param, i): [string, string | null] => [param, passed[i] ?? null]);
      if (!this.visit(callee, new Map(calleeParams))) return false;
    }
    return true;
  }
}
