/**
 * Descriptors that name the job's objects, as the render commands send them
 * (a render pipeline's, a render pass's, a render bundle encoder's): plain JSON
 * in which each GPU object is `{"$ref": id, "$kind": kind}`, the job's id and
 * what the job side knows it to be. The executor resolves each reference in the
 * job's own table (a missing or wrong one is the job's validation error) and
 * hands the rest to the shared device, which validates it as it would a local
 * call's. Depth is bounded so that no descriptor can exhaust the service's stack.
 *
 * Portable: no Node APIs.
 */
import { z } from 'zod';

/** The kinds a reference may name. */
export const REF_KINDS = ['shaderModule', 'pipelineLayout', 'bindGroupLayout', 'texture', 'textureView', 'querySet', 'sampler'] as const;
export type RefKind = (typeof REF_KINDS)[number];

/** A reference to one of the job's objects. */
export interface ObjectRef {
  $ref: number;
  $kind: RefKind;
}

/** How deep a descriptor may nest (WebGPU's are at most five levels). */
export const MAX_DESCRIPTOR_DEPTH = 12;

/** How deep `value` nests (1 for a scalar). */
function depthOf(value: unknown, limit: number): number {
  if (value === null || typeof value !== 'object' || limit <= 0) return 1;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, limit - 1));
  return deepest + 1;
}

/** A JSON descriptor of bounded depth. */
export const described = z.record(z.string(), z.unknown()).refine(
  (value) => depthOf(value, MAX_DESCRIPTOR_DEPTH + 1) <= MAX_DESCRIPTOR_DEPTH,
  `nests deeper than ${MAX_DESCRIPTOR_DEPTH} levels`,
);

/** Whether `value` is a reference to one of the job's objects. */
export function isObjectRef(value: unknown): value is ObjectRef {
  if (value === null || typeof value !== 'object') return false;
  const ref = value as Partial<ObjectRef>;
  return typeof ref.$ref === 'number' && (REF_KINDS as readonly unknown[]).includes(ref.$kind);
}
