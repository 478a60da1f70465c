/**
 * A job's own limits, enforced where the shared device's are larger. A local
 * device made with the job's descriptor refuses a compute pipeline whose
 * workgroup is too large or uses too much workgroup storage, layouts (bind
 * group, pipeline, 'auto') that show a stage more storage or uniform buffers
 * than its per-stage limits or hold more dynamic buffers than its
 * per-pipeline-layout limits, and a bind group whose buffer binding is larger
 * than `maxStorageBufferBindingSize` / `maxUniformBufferBindingSize` or whose
 * offset breaks its (coarser) offset alignment; Dawn, holding the adapter's
 * limits, would not. Replay asks these functions before Dawn does and turns a
 * message into the job's validation error. What cannot be read from the WGSL
 * is not refused.
 */
import { bufferBindingKinds, computeStageNeeds } from './wgslLimits.js';

/** The job's limit and the shared device's, for one limit name. */
export type LimitPair = (key: string) => { job: number; device: number };

/** Each shader module's WGSL source, while the module lives. */
const sources = new WeakMap<GPUShaderModule, string>();
/** Each pipeline's module, for the bindings of its 'auto' layouts. */
const pipelineModules = new WeakMap<GPUComputePipeline, GPUShaderModule>();
/** A buffer binding of a layout: its kind and the shader stages that see it (GPUShaderStage flags). */
interface BufferBindingInfo {
  kind: 'uniform' | 'storage';
  visibility: number;
  dynamic: boolean;
}

/** Each bind group layout's buffer bindings, by binding number; absent when unknown. */
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

/** Remembers the buffer bindings of an explicit layout. */
export function noteLayoutEntries(
  layout: GPUBindGroupLayout, entries: ReadonlyArray<{ binding: number; visibility: number; buffer?: { type?: string; hasDynamicOffset?: boolean } }>,
): void {
  const kinds = new Map<number, BufferBindingInfo>();
  for (const entry of entries) {
    if (!entry.buffer) continue;
    const kind = (entry.buffer.type ?? 'uniform') === 'uniform' ? 'uniform' : 'storage';
    kinds.set(entry.binding, { kind, visibility: entry.visibility, dynamic: Boolean(entry.buffer.hasDynamicOffset) });
  }
  layoutKinds.set(layout, kinds);
}

/** How many buffers of `kind` the layouts show each stage. */
function buffersPerStage(layouts: Iterable<ReadonlyMap<number, BufferBindingInfo>>, kind: 'uniform' | 'storage'): Map<string, number> {
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
  for (const [kind, key] of [['storage', 'maxStorageBuffersPerShaderStage'], ['uniform', 'maxUniformBuffersPerShaderStage']] as const) {
    for (const [stage, count] of buffersPerStage(layouts as ReadonlyMap<number, BufferBindingInfo>[], kind)) {
      const most = pastJobLimit(limits, key, count);
      if (most !== null) return `${what}: ${count} ${kind} buffers visible to the ${stage} stage exceed the device's ${key} ${most}`;
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

/** Remembers which module a pipeline was made from. */
export function notePipeline(pipeline: GPUComputePipeline, module: GPUShaderModule): void {
  if (sources.has(module)) pipelineModules.set(pipeline, module);
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
  const module = pipelineModules.get(pipeline);
  const groups = module === undefined ? null : groupsOf(module);
  if (!groups) return;
  layoutKinds.set(layout, groups.get(index) ?? NO_BINDINGS);
}

const AUTO_LAYOUT_LIMITS = ['maxStorageBuffersPerShaderStage', 'maxUniformBuffersPerShaderStage'];
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
  // An 'auto' layout holds the buffers the entry point uses; an explicit one was checked when it was made.
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

/** Why the job's device would refuse binding `sizeBytes` at `binding` of `layout`; null when it would not (or cannot tell). */
export function bindingSizeLimitError(
  limits: LimitPair, layout: GPUBindGroupLayout, binding: number, offsetBytes: number, sizeBytes: number,
): string | null {
  const kind = layoutKinds.get(layout)?.get(binding)?.kind;
  if (kind === undefined) return null;
  const key = kind === 'uniform' ? 'maxUniformBufferBindingSize' : 'maxStorageBufferBindingSize';
  const most = pastJobLimit(limits, key, sizeBytes);
  if (most !== null) return `createBindGroup: binding ${binding} is ${sizeBytes} bytes, more than the device's ${key} ${most}`;
  // Alignments: the job's may be coarser than the shared device's (an adapter's 32 under WebGPU's default 256).
  const alignKey = kind === 'uniform' ? 'minUniformBufferOffsetAlignment' : 'minStorageBufferOffsetAlignment';
  const { job, device } = limits(alignKey);
  if (job > device && offsetBytes % job !== 0) return `createBindGroup: binding ${binding}'s offset ${offsetBytes} is not a multiple of the device's ${alignKey} ${job}`;
  return null;
}
