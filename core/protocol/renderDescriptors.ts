/**
 * The WebIDL shape of the render descriptors (a render pipeline's, a render
 * pass's, a render bundle encoder's): which members are required and which
 * take an enum, and the enums' values. The job side checks a descriptor with it
 * before sending (a TypeError at the call, as on a local device); the service
 * checks it again before the shared device sees the descriptor, because Dawn's
 * node binding does not survive every malformed one (a GPUBlendState without
 * `color` or `alpha` aborts the process) and a job may send anything.
 *
 * Numbers, booleans and object references are left to the callers (WebIDL's
 * integer conversions on the job side, the shared device's validation).
 *
 * Portable: no Node APIs.
 */
import { formatFeatureProblem, TEXTURE_FORMATS } from './textureFormats.js';

/** GPUCompareFunction. */
export const COMPARE_FUNCTIONS = ['never', 'less', 'equal', 'less-equal', 'greater', 'not-equal', 'greater-equal', 'always'] as const;
/** GPUIndexFormat. */
export const INDEX_FORMATS = ['uint16', 'uint32'] as const;
const TOPOLOGIES = ['point-list', 'line-list', 'line-strip', 'triangle-list', 'triangle-strip'] as const;
const FRONT_FACES = ['ccw', 'cw'] as const;
const CULL_MODES = ['none', 'front', 'back'] as const;
const STEP_MODES = ['vertex', 'instance'] as const;
const VERTEX_FORMATS = [
  'uint8', 'uint8x2', 'uint8x4', 'sint8', 'sint8x2', 'sint8x4', 'unorm8', 'unorm8x2', 'unorm8x4', 'snorm8', 'snorm8x2', 'snorm8x4',
  'uint16', 'uint16x2', 'uint16x4', 'sint16', 'sint16x2', 'sint16x4', 'unorm16', 'unorm16x2', 'unorm16x4', 'snorm16', 'snorm16x2', 'snorm16x4',
  'float16', 'float16x2', 'float16x4', 'float32', 'float32x2', 'float32x3', 'float32x4',
  'uint32', 'uint32x2', 'uint32x3', 'uint32x4', 'sint32', 'sint32x2', 'sint32x3', 'sint32x4', 'unorm10-10-10-2', 'unorm8x4-bgra',
  // Not in every version of the specification, but dawn.node accepts it (a valid pipeline on a local device).
  'snorm10-10-10-2',
] as const;
const BLEND_FACTORS = [
  'zero', 'one', 'src', 'one-minus-src', 'src-alpha', 'one-minus-src-alpha', 'dst', 'one-minus-dst', 'dst-alpha', 'one-minus-dst-alpha',
  'src-alpha-saturated', 'constant', 'one-minus-constant', 'src1', 'one-minus-src1', 'src1-alpha', 'one-minus-src1-alpha',
] as const;
const BLEND_OPERATIONS = ['add', 'subtract', 'reverse-subtract', 'min', 'max'] as const;
const STENCIL_OPERATIONS = ['keep', 'zero', 'replace', 'invert', 'increment-clamp', 'decrement-clamp', 'increment-wrap', 'decrement-wrap'] as const;
const LOAD_OPS = ['load', 'clear'] as const;
const STORE_OPS = ['store', 'discard'] as const;

/** What a member holds: an enum value (a texture format when the values are TEXTURE_FORMATS), a dictionary, a sequence, a GPUColor, or anything (left to the callers). */
type Rule =
  | { enum: readonly string[] }
  | { dictionary: Members }
  | { sequence: Rule; nullable?: boolean }
  | { color: true }
  | { any: true };
type Members = Record<string, { rule: Rule; required?: boolean }>;

const required = (rule: Rule) => ({ rule, required: true });
const optional = (rule: Rule) => ({ rule });
const oneOf = (values: readonly string[]): Rule => ({ enum: values });
const dictionary = (members: Members): Rule => ({ dictionary: members });
const FORMAT: Rule = oneOf(TEXTURE_FORMATS);
const ANY: Rule = { any: true };

const BLEND_COMPONENT = dictionary({ operation: optional(oneOf(BLEND_OPERATIONS)), srcFactor: optional(oneOf(BLEND_FACTORS)), dstFactor: optional(oneOf(BLEND_FACTORS)) });
const STENCIL_FACE = dictionary({
  compare: optional(oneOf(COMPARE_FUNCTIONS)), failOp: optional(oneOf(STENCIL_OPERATIONS)),
  depthFailOp: optional(oneOf(STENCIL_OPERATIONS)), passOp: optional(oneOf(STENCIL_OPERATIONS)),
});

/** GPURenderPipelineDescriptor (its stages' `module` is a reference the callers resolve; `layout` is one or 'auto'). */
const RENDER_PIPELINE: Members = {
  layout: required(ANY),
  vertex: required(dictionary({
    module: required(ANY),
    buffers: optional({
      sequence: dictionary({
        arrayStride: required(ANY), stepMode: optional(oneOf(STEP_MODES)),
        attributes: required({ sequence: dictionary({ format: required(oneOf(VERTEX_FORMATS)), offset: required(ANY), shaderLocation: required(ANY) }) }),
      }),
      nullable: true,
    }),
  })),
  primitive: optional(dictionary({ topology: optional(oneOf(TOPOLOGIES)), stripIndexFormat: optional(oneOf(INDEX_FORMATS)), frontFace: optional(oneOf(FRONT_FACES)), cullMode: optional(oneOf(CULL_MODES)) })),
  depthStencil: optional(dictionary({ format: required(FORMAT), depthCompare: optional(oneOf(COMPARE_FUNCTIONS)), stencilFront: optional(STENCIL_FACE), stencilBack: optional(STENCIL_FACE) })),
  fragment: optional(dictionary({
    module: required(ANY),
    targets: required({
      sequence: dictionary({ format: required(FORMAT), blend: optional(dictionary({ color: required(BLEND_COMPONENT), alpha: required(BLEND_COMPONENT) })) }),
      nullable: true,
    }),
  })),
};

/** GPURenderPassDescriptor. */
const RENDER_PASS: Members = {
  colorAttachments: required({
    sequence: dictionary({ view: required(ANY), clearValue: optional({ color: true }), loadOp: required(oneOf(LOAD_OPS)), storeOp: required(oneOf(STORE_OPS)) }),
    nullable: true,
  }),
  depthStencilAttachment: optional(dictionary({
    view: required(ANY), depthLoadOp: optional(oneOf(LOAD_OPS)), depthStoreOp: optional(oneOf(STORE_OPS)),
    stencilLoadOp: optional(oneOf(LOAD_OPS)), stencilStoreOp: optional(oneOf(STORE_OPS)),
  })),
  timestampWrites: optional(dictionary({ querySet: required(ANY) })),
};

/** GPURenderBundleEncoderDescriptor. */
const RENDER_BUNDLE_ENCODER: Members = {
  colorFormats: required({ sequence: FORMAT, nullable: true }),
  depthStencilFormat: optional(FORMAT),
};

/** The descriptors checked here. */
export const RENDER_DESCRIPTORS = { createRenderPipeline: RENDER_PIPELINE, beginRenderPass: RENDER_PASS, createRenderBundleEncoder: RENDER_BUNDLE_ENCODER };
export type RenderDescriptorKind = keyof typeof RENDER_DESCRIPTORS;

/** A texture format a descriptor names, with where. */
interface NamedFormat {
  format: string;
  path: string;
}

/**
 * Why `descriptor` (as JSON: sequences as arrays) is not a `kind` descriptor WebIDL would convert, or names a
 * texture format that a device with `features` may not use; null when it is fine.
 */
export function renderDescriptorProblem(kind: RenderDescriptorKind, descriptor: unknown, features?: { has(feature: string): boolean }): string | null {
  const formats: NamedFormat[] = [];
  const problem = membersProblem(RENDER_DESCRIPTORS[kind], descriptor, kind, formats);
  if (problem || !features) return problem;
  return formats.map(({ format, path }) => formatFeatureProblem(format, features, path)).find((found) => found !== null) ?? null;
}

function membersProblem(members: Members, value: unknown, path: string, formats: NamedFormat[]): string | null {
  if (value === null || value === undefined) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) return `${path}: not a dictionary`;
  const dict = value as Record<string, unknown>;
  for (const [name, { rule, required: isRequired }] of Object.entries(members)) {
    const member = dict[name];
    if (member === undefined) {
      if (isRequired) return `${path}: the dictionary has no '${name}'`;
      continue;
    }
    const problem = ruleProblem(rule, member, `${path}.${name}`, formats);
    if (problem) return problem;
  }
  return null;
}

function ruleProblem(rule: Rule, value: unknown, path: string, formats: NamedFormat[]): string | null {
  if ('any' in rule) return null;
  if ('enum' in rule) {
    if (!rule.enum.includes(String(value))) return `${path}: '${String(value)}' is not a valid value`;
    if (rule.enum === TEXTURE_FORMATS) formats.push({ format: String(value), path });
    return null;
  }
  if ('dictionary' in rule) return membersProblem(rule.dictionary, value, path, formats);
  if ('color' in rule) {
    if (Array.isArray(value) || value === null || typeof value !== 'object') return null;
    const missing = ['r', 'g', 'b', 'a'].find((key) => (value as Record<string, unknown>)[key] === undefined);
    return missing ? `${path}: the GPUColor has no '${missing}'` : null;
  }
  if (!Array.isArray(value)) return `${path}: not a sequence`;
  for (let i = 0; i < value.length; i++) {
    if (rule.nullable && (value[i] === null || value[i] === undefined)) continue;
    const problem = ruleProblem(rule.sequence, value[i], `${path}[${i}]`, formats);
    if (problem) return problem;
  }
  return null;
}
