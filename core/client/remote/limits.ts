/**
 * What a job's device reports as `features` and `limits`. The service's shared
 * device has every feature and the adapter's best limits, but a job must see
 * what a local device made from the same descriptor would show: WebGPU's
 * default limits, raised where `requiredLimits` asks, and only the features it
 * asked for. Libraries size their kernels from these numbers (TF.js caps
 * `addN` inputs at `maxStorageBuffersPerShaderStage - 1`), so reporting the
 * shared device's would change a job's results.
 */

/** WebGPU's default limits (the values Dawn gives a device that asks for none). */
export const DEFAULT_LIMITS: Readonly<Record<string, number>> = Object.freeze({
  maxTextureDimension1D: 8192,
  maxTextureDimension2D: 8192,
  maxTextureDimension3D: 2048,
  maxTextureArrayLayers: 256,
  maxBindGroups: 4,
  maxBindGroupsPlusVertexBuffers: 24,
  maxBindingsPerBindGroup: 1000,
  maxDynamicUniformBuffersPerPipelineLayout: 8,
  maxDynamicStorageBuffersPerPipelineLayout: 4,
  maxSampledTexturesPerShaderStage: 16,
  maxSamplersPerShaderStage: 16,
  maxStorageBuffersPerShaderStage: 8,
  maxStorageBuffersInVertexStage: 8,
  maxStorageBuffersInFragmentStage: 8,
  maxStorageTexturesPerShaderStage: 4,
  maxStorageTexturesInVertexStage: 4,
  maxStorageTexturesInFragmentStage: 4,
  maxUniformBuffersPerShaderStage: 12,
  maxUniformBufferBindingSize: 65536,
  maxStorageBufferBindingSize: 134217728,
  minUniformBufferOffsetAlignment: 256,
  minStorageBufferOffsetAlignment: 256,
  maxVertexBuffers: 8,
  maxBufferSize: 268435456,
  maxVertexAttributes: 16,
  maxVertexBufferArrayStride: 2048,
  maxInterStageShaderVariables: 16,
  maxColorAttachments: 8,
  maxColorAttachmentBytesPerSample: 32,
  maxComputeWorkgroupStorageSize: 16384,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupSizeZ: 64,
  maxComputeWorkgroupsPerDimension: 65535,
});

/** Features a device has without asking, when its adapter has them. */
const IMPLICIT_FEATURES = ['core-features-and-limits'];

/** `min…` limits are alignments: smaller is better. */
const lowerIsBetter = (key: string) => key.startsWith('min');

/** Whether `value` is an alignment WebGPU allows: a power of 2 of at most 2^31 (exactly: `Math.log2` rounds 2^53 − 1 to 53). */
const isAlignment = (value: number) => value >= 1 && value <= 2 ** 31 && 2 ** Math.round(Math.log2(value)) === value;

/**
 * The device's limits for `requiredLimits` (already converted by WebIDL) on an adapter with `adapterLimits`.
 * Throws an OperationError DOMException, as requestDevice rejects, for an
 * unknown limit, one past the adapter's, or an alignment that is not a power of 2.
 */
export function deviceLimits(
  adapterLimits: Readonly<Record<string, number>>,
  requiredLimits: Readonly<Record<string, number>> = {},
): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const key of Object.keys(adapterLimits)) limits[key] = DEFAULT_LIMITS[key] ?? adapterLimits[key];
  for (const [key, value] of Object.entries(requiredLimits)) {
    if (!Object.prototype.hasOwnProperty.call(adapterLimits, key)) throw new DOMException(`requestDevice: unknown limit '${key}'`, 'OperationError');
    const adapterValue = adapterLimits[key];
    if (lowerIsBetter(key)) {
      if (value < adapterValue) throw new DOMException(`requestDevice: ${key} ${value} is below the adapter's ${adapterValue}`, 'OperationError');
      if (!isAlignment(value)) throw new DOMException(`requestDevice: ${key} ${value} is not a power of 2 of at most 2^31`, 'OperationError');
      limits[key] = Math.min(limits[key], value);
    } else {
      if (value > adapterValue) throw new DOMException(`requestDevice: ${key} ${value} exceeds the adapter's ${adapterValue}`, 'OperationError');
      limits[key] = Math.max(limits[key], value);
    }
  }
  return limits;
}

/**
 * The device's features for `requiredFeatures` (a sequence, whose items are
 * converted to strings as WebIDL does: TF.js passes `['bgra8unorm-storage']`).
 * Throws a TypeError, as requestDevice rejects, for one the adapter lacks.
 */
export function deviceFeatures(adapterFeatures: ReadonlySet<string>, requiredFeatures: Iterable<unknown> = []): Set<string> {
  const features = new Set<string>();
  for (const item of requiredFeatures) {
    const feature = String(item);
    if (!adapterFeatures.has(feature)) throw new TypeError(`requestDevice: feature '${feature}' is not supported by the adapter`);
    features.add(feature);
  }
  for (const feature of IMPLICIT_FEATURES) if (adapterFeatures.has(feature)) features.add(feature);
  return features;
}
