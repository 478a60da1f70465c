/**
 * A job's own limits, enforced where the shared device's are larger. A local
 * device made with the job's descriptor refuses a compute pipeline whose
 * workgroup is too large or uses too much workgroup storage, layouts (bind
 * group, pipeline, 'auto') that show a stage more storage or uniform buffers
 * (or, explicit ones, sampled or storage textures, or samplers) than its per-stage limits or hold more dynamic buffers than its
 * per-pipeline-layout limits, and a bind group whose buffer binding is larger
 * than `maxStorageBufferBindingSize` / `maxUniformBufferBindingSize` or whose
 * offset breaks its (coarser) offset alignment, and a texture larger than its
 * `maxTextureDimension*` or `maxTextureArrayLayers`, and color targets (a render
 * pipeline's, pass's or bundle's) past `maxColorAttachmentBytesPerSample`; Dawn, holding the adapter's
 * limits, would not. Replay asks these functions before Dawn does and turns a
 * message into the job's validation error. What cannot be read from the WGSL
 * is not refused.
 */
import { bufferBindingKinds, computeStageNeeds, interStageVariables, stageResources, type ResourceKind } from './wgslLimits.js';
import { autoLayoutSampleType, noteAutoLayout, noteAutoPipeline } from './autoLayoutTextures.js';

/** The job's limit and the shared device's, for one limit name. */
export type LimitPair = (key: string) => { job: number; device: number };

/** Each shader module's WGSL source, while the module lives. */
const sources = new WeakMap<GPUShaderModule, string>();
/** Each pipeline's module, for the bindings of its 'auto' layouts. */
const pipelineModules = new WeakMap<GPUComputePipeline, GPUShaderModule>();
/** A binding of a layout (a buffer, texture or sampler): its kind and the shader stages that see it (GPUShaderStage flags). */
interface BufferBindingInfo {
  kind: BindingKind;
  /** A sampled texture's sample type. */
  sampleType?: string;
  visibility: number;
  dynamic: boolean;
}

type BindingKind = 'uniform' | 'storage' | 'sampledTexture' | 'storageTexture' | 'sampler';

/** Each kind of binding counted per shader stage, and the limit that bounds it. */
const PER_STAGE_LIMITS = [
  ['storage', 'maxStorageBuffersPerShaderStage', 'storage buffers'], ['uniform', 'maxUniformBuffersPerShaderStage', 'uniform buffers'],
  ['sampledTexture', 'maxSampledTexturesPerShaderStage', 'sampled textures'], ['storageTexture', 'maxStorageTexturesPerShaderStage', 'storage textures'],
  ['sampler', 'maxSamplersPerShaderStage', 'samplers'],
] as const;

/** The kind of a layout entry's binding; null for one this module does not count (an external texture). */
function bindingKind(entry: { buffer?: { type?: string }; texture?: object; storageTexture?: object; sampler?: object }): BindingKind | null {
  if (entry.buffer) return (entry.buffer.type ?? 'uniform') === 'uniform' ? 'uniform' : 'storage';
  if (entry.texture) return 'sampledTexture';
  if (entry.storageTexture) return 'storageTexture';
  if (entry.sampler) return 'sampler';
  return null;
}

/** Each bind group layout's bindings, by binding number; absent when unknown. */
const layoutKinds = new WeakMap<GPUBindGroupLayout, ReadonlyMap<number, BufferBindingInfo>>();
/**
 * Each module's buffer bindings by group, read from its WGSL once (null: unreadable). Jobs such as
 * TF.js call getBindGroupLayout before every dispatch, and reading a large shader takes ~0.3 ms.
 */
const moduleGroups = new WeakMap<GPUShaderModule, ReadonlyMap<number, ReadonlyMap<number, BufferBindingInfo>> | null>();

const STAGES = [['vertex', 0x1], ['fragment', 0x2], ['compute', 0x4]] as const;

/** Remembers `module`'s source. */
export function noteShaderModule(module: GPUShaderModule, code: string): void {
  sources.set(module, code);
}

/** The WGSL `module` was made from (undefined for a module not made through noteShaderModule). */
export function shaderSource(module: GPUShaderModule): string | undefined {
  return sources.get(module);
}

/** Remembers the bindings of an explicit layout. */
export function noteLayoutEntries(
  layout: GPUBindGroupLayout,
  entries: ReadonlyArray<{ binding: number; visibility: number; buffer?: { type?: string; hasDynamicOffset?: boolean }; texture?: { sampleType?: string }; storageTexture?: object; sampler?: object }>,
): void {
  const kinds = new Map<number, BufferBindingInfo>();
  for (const entry of entries) {
    const kind = bindingKind(entry);
    if (kind) kinds.set(entry.binding, { kind, visibility: entry.visibility, dynamic: Boolean(entry.buffer?.hasDynamicOffset), sampleType: entry.texture?.sampleType });
  }
  layoutKinds.set(layout, kinds);
}

/** How many bindings of `kind` the layouts show each stage. */
function buffersPerStage(layouts: Iterable<ReadonlyMap<number, BufferBindingInfo>>, kind: BindingKind): Map<string, number> {
  const counts = new Map<string, number>();
  for (const layout of layouts) {
    for (const info of layout.values()) {
      if (info.kind !== kind) continue;
      for (const [stage, bit] of STAGES) if (info.visibility & bit) counts.set(stage, (counts.get(stage) ?? 0) + 1);
    }
  }
  return counts;
}

/** Why the job's device would refuse layouts showing a stage more buffers per kind than its limits; null when it would not (or cannot tell). */
function perStageError(limits: LimitPair, layouts: ReadonlyArray<ReadonlyMap<number, BufferBindingInfo> | undefined>, what: string): string | null {
  if (layouts.some((l) => l === undefined)) return null;
  for (const [kind, key, noun] of PER_STAGE_LIMITS) {
    for (const [stage, count] of buffersPerStage(layouts as ReadonlyMap<number, BufferBindingInfo>[], kind)) {
      const most = pastJobLimit(limits, key, count);
      if (most !== null) return `${what}: ${count} ${noun} visible to the ${stage} stage exceed the device's ${key} ${most}`;
    }
  }
  // Dynamic offsets count per pipeline layout (a bind group layout alone is held to the same limits).
  const dynamicLimits = [['uniform', 'maxDynamicUniformBuffersPerPipelineLayout'], ['storage', 'maxDynamicStorageBuffersPerPipelineLayout']] as const;
  for (const [kind, key] of dynamicLimits) {
    let count = 0;
    for (const layout of layouts as ReadonlyMap<number, BufferBindingInfo>[]) for (const info of layout.values()) if (info.kind === kind && info.dynamic) count++;
    const most = pastJobLimit(limits, key, count);
    if (most !== null) return `${what}: ${count} ${kind} buffers with dynamic offsets exceed the device's ${key} ${most}`;
  }
  return null;
}

/** Why the job's device would refuse this bind group layout (its buffer counts per stage); null when it would not. */
export function bindGroupLayoutLimitError(limits: LimitPair, layout: GPUBindGroupLayout): string | null {
  return perStageError(limits, [layoutKinds.get(layout)], 'createBindGroupLayout');
}

/** Why the job's device would refuse a pipeline layout of these bind group layouts (its buffer counts per stage); null when it would not. */
export function pipelineLayoutLimitError(limits: LimitPair, layouts: ReadonlyArray<GPUBindGroupLayout | null>): string | null {
  return perStageError(limits, layouts.filter((l) => l !== null).map((l) => layoutKinds.get(l)), 'createPipelineLayout');
}

/** Remembers which module a pipeline was made from, and `auto`'s entry point and constants when its layout is 'auto'. */
export function notePipeline(
  pipeline: GPUComputePipeline, module: GPUShaderModule, auto?: { entryPoint?: string; constants?: Readonly<Record<string, number>> } | null,
): void {
  const source = sources.get(module);
  if (source === undefined) return;
  pipelineModules.set(pipeline, module);
  if (auto) noteAutoPipeline(pipeline, [{ stage: 'compute', source, ...auto }]);
}

/** Remembers a render pipeline made with layout 'auto' from these stages (for the textures its layouts sample). */
export function noteAutoRenderPipeline(pipeline: GPURenderPipeline, stages: readonly RenderStage[]): void {
  const known = stages.filter((s) => sources.has(s.module));
  noteAutoPipeline(pipeline, known.map(({ stage, module, entryPoint, constants }) => ({ stage, source: sources.get(module)!, entryPoint, constants })));
}

/** `module`'s buffer bindings by group (read once, then shared: callers never change them); null when unknown. */
function groupsOf(module: GPUShaderModule): ReadonlyMap<number, ReadonlyMap<number, BufferBindingInfo>> | null {
  let groups = moduleGroups.get(module);
  if (groups !== undefined) return groups;
  const source = sources.get(module);
  const kinds = source === undefined ? null : bufferBindingKinds(source);
  if (kinds) {
    const byGroup = new Map<number, Map<number, BufferBindingInfo>>();
    for (const [key, kind] of kinds) {
      const [group, binding] = key.split(':').map(Number);
      let ofGroup = byGroup.get(group);
      if (!ofGroup) byGroup.set(group, ofGroup = new Map());
      ofGroup.set(binding, { kind, visibility: 0x4, dynamic: false });
    }
    groups = byGroup;
  } else groups = null;
  moduleGroups.set(module, groups);
  return groups;
}

const NO_BINDINGS: ReadonlyMap<number, BufferBindingInfo> = new Map();

/** Remembers the buffer bindings of group `index` of a pipeline's (auto) layout. */
export function noteLayoutOfPipeline(layout: GPUBindGroupLayout, pipeline: GPUComputePipeline, index: number): void {
  noteAutoLayout(layout, pipeline, index);
  const module = pipelineModules.get(pipeline);
  const groups = module === undefined ? null : groupsOf(module);
  if (!groups) return;
  layoutKinds.set(layout, groups.get(index) ?? NO_BINDINGS);
}

const AUTO_LAYOUT_LIMITS = PER_STAGE_LIMITS.map(([, key]) => key);
const COMPUTE_LIMITS = [
  'maxComputeWorkgroupSizeX', 'maxComputeWorkgroupSizeY', 'maxComputeWorkgroupSizeZ', 'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupStorageSize',
];

/** Whether `value` passes the job's limit `key` but only because the shared device's is larger. */
function pastJobLimit(limits: LimitPair, key: string, value: number): number | null {
  const { job, device } = limits(key);
  return value > job && job < device ? job : null;
}

/** Why the job's device would refuse a compute pipeline of `module`'s `entryPoint`; null when it would not (or cannot tell). */
export function computePipelineLimitError(
  limits: LimitPair, module: GPUShaderModule, entryPoint: string | undefined, constants: Readonly<Record<string, number>> | undefined,
  autoLayout: boolean,
): string | null {
  // Where the job asked for the shared device's own limits, Dawn checks them: no need to read the WGSL.
  const checked = autoLayout ? [...COMPUTE_LIMITS, ...AUTO_LAYOUT_LIMITS] : COMPUTE_LIMITS;
  if (!checked.some((key) => limits(key).job < limits(key).device)) return null;
  const source = sources.get(module);
  const needs = source === undefined ? null : computeStageNeeds(source, entryPoint, constants);
  if (!needs) return null;
  if (needs.workgroupSize) {
    const [x, y, z] = needs.workgroupSize;
    for (const [axis, size] of [['X', x], ['Y', y], ['Z', z]] as const) {
      const most = pastJobLimit(limits, `maxComputeWorkgroupSize${axis}`, size);
      if (most !== null) return `the entry point's workgroup_size(${x}, ${y}, ${z}) exceeds the device's maxComputeWorkgroupSize${axis} ${most}`;
    }
    const most = pastJobLimit(limits, 'maxComputeInvocationsPerWorkgroup', x * y * z);
    if (most !== null) return `the entry point's ${x * y * z} workgroup invocations exceed the device's maxComputeInvocationsPerWorkgroup ${most}`;
  }
  if (needs.workgroupStorageBytes !== null) {
    const most = pastJobLimit(limits, 'maxComputeWorkgroupStorageSize', needs.workgroupStorageBytes);
    if (most !== null) return `the entry point uses ${needs.workgroupStorageBytes} bytes of workgroup storage, more than the device's maxComputeWorkgroupStorageSize ${most}`;
  }
  // An 'auto' layout holds the bindings the entry point uses; an explicit one was checked when it was made.
  if (autoLayout) {
    const counts = stageResources(source!, entryPoint, 'compute', constants);
    const refusal = counts ? autoStageError(limits, counts, 'compute') : null;
    if (refusal) return refusal;
  }
  if (autoLayout && needs.bufferBindings) {
    for (const [kind, key] of [['storage', 'maxStorageBuffersPerShaderStage'], ['uniform', 'maxUniformBuffersPerShaderStage']] as const) {
      const most = pastJobLimit(limits, key, needs.bufferBindings[kind]);
      if (most !== null) return `the entry point uses ${needs.bufferBindings[kind]} ${kind} buffers, more than the device's ${key} ${most}`;
    }
  }
  return null;
}

/** Per bind group, each dynamic binding's alignment (in dynamic-offset order) where the job's is coarser than the shared device's, else 0. */
const dynamicAlignments = new WeakMap<GPUBindGroup, number[]>();

/** Remembers which of `group`'s dynamic bindings (binding numbers, in increasing order) need the job's coarser alignment. */
export function noteDynamicAlignments(limits: LimitPair, group: GPUBindGroup, layout: GPUBindGroupLayout, dynamicBindings: readonly number[]): void {
  const alignments = dynamicBindings.map((binding) => {
    const kind = layoutKinds.get(layout)?.get(binding)?.kind;
    if (kind === undefined) return 0;
    const { job, device } = limits(kind === 'uniform' ? 'minUniformBufferOffsetAlignment' : 'minStorageBufferOffsetAlignment');
    return job > device ? job : 0;
  });
  if (alignments.some((a) => a > 0)) dynamicAlignments.set(group, alignments);
}

/** Why the job's device would refuse these dynamic offsets for `group` (one its alignment does not allow); null when it would not. */
export function dynamicOffsetAlignmentError(group: GPUBindGroup, offsets: readonly number[]): string | null {
  const alignments = dynamicAlignments.get(group);
  if (!alignments) return null;
  for (const [i, alignment] of alignments.entries()) {
    if (alignment > 0 && i < offsets.length && offsets[i] % alignment !== 0) {
      return `setBindGroup: dynamic offset ${offsets[i]} is not a multiple of the device's offset alignment ${alignment}`;
    }
  }
  return null;
}

/** Per limit pair, whether the job's buffer binding limits are stricter than the shared device's anywhere (`bindingLimitsStricter`). */
const stricterBindingLimits = new WeakMap<LimitPair, boolean>();

/**
 * Whether `bindingSizeLimitError` can refuse anything under `limits`: false when the job's binding sizes and
 * offset alignments are the shared device's own (Dawn checks those), so a bind group's entries need no check.
 */
export function bindingLimitsStricter(limits: LimitPair): boolean {
  let stricter = stricterBindingLimits.get(limits);
  if (stricter === undefined) {
    const smaller = (key: string) => limits(key).job < limits(key).device;
    const coarser = (key: string) => limits(key).job > limits(key).device;
    stricter = smaller('maxUniformBufferBindingSize') || smaller('maxStorageBufferBindingSize')
      || coarser('minUniformBufferOffsetAlignment') || coarser('minStorageBufferOffsetAlignment');
    stricterBindingLimits.set(limits, stricter);
  }
  return stricter;
}

/** Why the job's device would refuse binding `sizeBytes` at `binding` of `layout`; null when it would not (or cannot tell). */
export function bindingSizeLimitError(
  limits: LimitPair, layout: GPUBindGroupLayout, binding: number, offsetBytes: number, sizeBytes: number,
): string | null {
  const kind = layoutKinds.get(layout)?.get(binding)?.kind;
  if (kind !== 'uniform' && kind !== 'storage') return null;
  const key = kind === 'uniform' ? 'maxUniformBufferBindingSize' : 'maxStorageBufferBindingSize';
  const most = pastJobLimit(limits, key, sizeBytes);
  if (most !== null) return `createBindGroup: binding ${binding} is ${sizeBytes} bytes, more than the device's ${key} ${most}`;
  // Alignments: the job's may be coarser than the shared device's (an adapter's 32 under WebGPU's default 256).
  const alignKey = kind === 'uniform' ? 'minUniformBufferOffsetAlignment' : 'minStorageBufferOffsetAlignment';
  const { job, device } = limits(alignKey);
  if (job > device && offsetBytes % job !== 0) return `createBindGroup: binding ${binding}'s offset ${offsetBytes} is not a multiple of the device's ${alignKey} ${job}`;
  return null;
}

/** Why the job's device would refuse a texture of this size; null when it would not. */
export function textureLimitError(limits: LimitPair, dimension: '1d' | '2d' | '3d', size: readonly [number, number, number]): string | null {
  const [width, height, depth] = size;
  const bounded: Array<[string, number]> = dimension === '1d'
    ? [['maxTextureDimension1D', width]]
    : dimension === '2d'
      ? [['maxTextureDimension2D', Math.max(width, height)], ['maxTextureArrayLayers', depth]]
      : [['maxTextureDimension3D', Math.max(width, height, depth)]];
  for (const [key, value] of bounded) {
    const most = pastJobLimit(limits, key, value);
    if (most !== null) return `createTexture: size [${width}, ${height}, ${depth}] of a ${dimension} texture exceeds the device's ${key} ${most}`;
  }
  return null;
}

/** The 32-bit float formats a 'float' (filterable) binding takes only with the 'float32-filterable' feature. */
const FLOAT32_FORMATS = new Set(['r32float', 'rg32float', 'rgba32float']);

/** Why the job's device, made without 'float32-filterable', would refuse binding a view of `format` at `binding`; null when it would not. */
export function float32FilterableError(features: ReadonlySet<string> | undefined, layout: GPUBindGroupLayout, binding: number, format: string): string | null {
  if (!features || features.has('float32-filterable') || !FLOAT32_FORMATS.has(format)) return null;
  if ((layoutKinds.get(layout)?.get(binding)?.sampleType ?? autoLayoutSampleType(layout, binding)) !== 'float') return null;
  return `createBindGroup: binding ${binding} samples a '${format}' texture as filterable 'float', which needs the 'float32-filterable' feature that requestDevice did not ask for`;
}

/** Each color-renderable format's render target byte cost and alignment (WebGPU's "render target pixel byte cost"). */
const COLOR_TARGET_BYTES: ReadonlyMap<string, [number, number]> = new Map([
  ...['r8unorm', 'r8uint', 'r8sint'].map((f) => [f, [1, 1]] as const),
  ...['rg8unorm', 'rg8uint', 'rg8sint'].map((f) => [f, [2, 1]] as const),
  ...['rgba8unorm', 'rgba8unorm-srgb', 'bgra8unorm', 'bgra8unorm-srgb'].map((f) => [f, [8, 1]] as const),
  ...['rgba8uint', 'rgba8sint'].map((f) => [f, [4, 1]] as const),
  ...['r16uint', 'r16sint', 'r16float', 'r16unorm', 'r16snorm'].map((f) => [f, [2, 2]] as const),
  ...['rg16uint', 'rg16sint', 'rg16float', 'rg16unorm', 'rg16snorm'].map((f) => [f, [4, 2]] as const),
  ...['rgba16uint', 'rgba16sint', 'rgba16float', 'rgba16unorm', 'rgba16snorm'].map((f) => [f, [8, 2]] as const),
  ...['r32uint', 'r32sint', 'r32float'].map((f) => [f, [4, 4]] as const),
  ...['rg32uint', 'rg32sint', 'rg32float', 'rgb10a2uint', 'rgb10a2unorm', 'rg11b10ufloat'].map((f) => [f, [8, 4]] as const),
  ...['rgba32uint', 'rgba32sint', 'rgba32float'].map((f) => [f, [16, 4]] as const),
] as [string, [number, number]][]);

/**
 * Why the job's device would refuse color targets of these formats (in order, null for a hole) for their
 * bytes per sample, each aligned to its format's alignment; null when it would not (or cannot tell).
 */
export function colorBytesPerSampleError(limits: LimitPair, formats: ReadonlyArray<string | null | undefined>, what: string): string | null {
  let bytes = 0;
  for (const format of formats) {
    if (!format) continue;
    const cost = COLOR_TARGET_BYTES.get(format);
    if (!cost) return null; // not color-renderable: the shared device's own error
    bytes = Math.ceil(bytes / cost[1]) * cost[1] + cost[0];
  }
  const most = pastJobLimit(limits, 'maxColorAttachmentBytesPerSample', bytes);
  return most === null ? null : `${what}: the color targets take ${bytes} bytes per sample, more than the device's maxColorAttachmentBytesPerSample ${most}`;
}

/** Why the job's device would refuse an 'auto' layout of a stage using `counts` bindings; null when it would not. */
function autoStageError(limits: LimitPair, counts: Record<ResourceKind, number>, stage: string): string | null {
  for (const [kind, key, noun] of PER_STAGE_LIMITS) {
    const most = pastJobLimit(limits, key, counts[kind]);
    if (most !== null) return `the ${stage} entry point uses ${counts[kind]} ${noun}, more than the device's ${key} ${most}`;
  }
  return null;
}

/** A render pipeline's stage, as its descriptor names it. */
export interface RenderStage {
  stage: 'vertex' | 'fragment';
  module: GPUShaderModule;
  entryPoint?: string;
  constants?: Readonly<Record<string, number>>;
}

/**
 * Why the job's device would refuse a render pipeline with an 'auto' layout: one of its stages uses more
 * bindings of a kind than the job's per-stage limit; null when it would not (or cannot tell).
 */
export function autoRenderLayoutError(limits: LimitPair, stages: readonly RenderStage[]): string | null {
  if (!PER_STAGE_LIMITS.some(([, key]) => limits(key).job < limits(key).device)) return null;
  for (const { stage, module, entryPoint, constants } of stages) {
    const source = sources.get(module);
    const counts = source === undefined ? null : stageResources(source, entryPoint, stage, constants ?? {});
    const refusal = counts ? autoStageError(limits, counts, stage) : null;
    if (refusal) return refusal;
  }
  return null;
}

/**
 * Why the job's device would refuse a render pipeline for its inter-stage variables (WebGPU's
 * maxInterStageShaderVariables: a vertex stage's outputs, plus one for a point-list; a fragment stage's inputs);
 * null when it would not (or cannot tell).
 */
export function interStageLimitError(limits: LimitPair, stages: readonly RenderStage[], pointList: boolean): string | null {
  const { job, device } = limits('maxInterStageShaderVariables');
  if (job >= device) return null;
  for (const { stage, module, entryPoint } of stages) {
    const source = sources.get(module);
    const count = source === undefined ? null : interStageVariables(source, entryPoint, stage);
    if (count === null) continue;
    const total = count + (stage === 'vertex' && pointList ? 1 : 0);
    if (total > job) return `the ${stage} stage passes ${total} inter-stage variables, more than the device's maxInterStageShaderVariables ${job}`;
  }
  return null;
}
