/**
 * A job's own compute limits, enforced where the shared device's are larger.
 * A local device made with the job's descriptor refuses a compute pipeline
 * whose workgroup is too large or uses too much workgroup storage, and a bind
 * group whose buffer binding is larger than `maxStorageBufferBindingSize` or
 * `maxUniformBufferBindingSize`; Dawn, holding the adapter's limits, would not.
 * Replay asks these functions before Dawn does and turns a message into the
 * job's validation error. What cannot be read from the WGSL is not refused.
 */
import { bufferBindingKinds, computeStageNeeds } from './wgslLimits.js';

/** The job's limit and the shared device's, for one limit name. */
export type LimitPair = (key: string) => { job: number; device: number };

/** Each shader module's WGSL source, while the module lives. */
const sources = new WeakMap<GPUShaderModule, string>();
/** Each pipeline's module source, for the bindings of its 'auto' layouts. */
const pipelineSources = new WeakMap<GPUComputePipeline, string>();
/** Each bind group layout's buffer bindings, by binding number; absent when unknown. */
const layoutKinds = new WeakMap<GPUBindGroupLayout, Map<number, 'uniform' | 'storage'>>();

/** Remembers `module`'s source. */
export function noteShaderModule(module: GPUShaderModule, code: string): void {
  sources.set(module, code);
}

/** Remembers the buffer bindings of an explicit layout. */
export function noteLayoutEntries(layout: GPUBindGroupLayout, entries: ReadonlyArray<{ binding: number; buffer?: { type?: string } }>): void {
  const kinds = new Map<number, 'uniform' | 'storage'>();
  for (const entry of entries) {
    if (entry.buffer) kinds.set(entry.binding, (entry.buffer.type ?? 'uniform') === 'uniform' ? 'uniform' : 'storage');
  }
  layoutKinds.set(layout, kinds);
}

/** Remembers which module a pipeline was made from. */
export function notePipeline(pipeline: GPUComputePipeline, module: GPUShaderModule): void {
  const source = sources.get(module);
  if (source !== undefined) pipelineSources.set(pipeline, source);
}

/** Remembers the buffer bindings of group `index` of a pipeline's (auto) layout. */
export function noteLayoutOfPipeline(layout: GPUBindGroupLayout, pipeline: GPUComputePipeline, index: number): void {
  const source = pipelineSources.get(pipeline);
  const kinds = source === undefined ? null : bufferBindingKinds(source);
  if (!kinds) return;
  const ofGroup = new Map<number, 'uniform' | 'storage'>();
  for (const [key, kind] of kinds) {
    const [group, binding] = key.split(':').map(Number);
    if (group === index) ofGroup.set(binding, kind);
  }
  layoutKinds.set(layout, ofGroup);
}

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
): string | null {
  // Where the job asked for the shared device's own limits, Dawn checks them: no need to read the WGSL.
  if (!COMPUTE_LIMITS.some((key) => limits(key).job < limits(key).device)) return null;
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
  return null;
}

/** Why the job's device would refuse binding `sizeBytes` at `binding` of `layout`; null when it would not (or cannot tell). */
export function bindingSizeLimitError(limits: LimitPair, layout: GPUBindGroupLayout, binding: number, sizeBytes: number): string | null {
  const kind = layoutKinds.get(layout)?.get(binding);
  if (kind === undefined) return null;
  const key = kind === 'uniform' ? 'maxUniformBufferBindingSize' : 'maxStorageBufferBindingSize';
  const most = pastJobLimit(limits, key, sizeBytes);
  return most === null ? null : `createBindGroup: binding ${binding} is ${sizeBytes} bytes, more than the device's ${key} ${most}`;
}
