/**
 * The sampled textures an 'auto' bind group layout binds as filterable 'float'
 * (an f32 texture its pipeline's entry points sample with a `sampler`), so that
 * createBindGroup refuses a 32-bit float texture there to a job whose device
 * lacks 'float32-filterable', as a local device does: the shared device has the
 * feature and would accept it. Read from the stages' WGSL once per pipeline;
 * what the WGSL reading cannot tell is never refused.
 */
import { filterableTextureBindings } from './wgslSampledTextures.js';

/** One stage of a pipeline made with layout 'auto', with its module's WGSL. */
export interface AutoStage {
  stage: 'vertex' | 'fragment' | 'compute';
  source: string;
  entryPoint?: string;
  constants?: Readonly<Record<string, number>>;
}

/** Per pipeline, its 'float' textures by group (binding numbers); null when unknown or none. */
const pipelineFloats = new WeakMap<object, ReadonlyMap<number, ReadonlySet<number>> | null>();
/** Per 'auto' bind group layout, its 'float' texture bindings. */
const layoutFloats = new WeakMap<GPUBindGroupLayout, ReadonlySet<number>>();

/** Remembers which textures of `pipeline`'s 'auto' layout are 'float'; `stages` are its stages when it was made with layout 'auto'. */
export function noteAutoPipeline(pipeline: object, stages: readonly AutoStage[]): void {
  // Most shaders (TF.js's) sample no f32 texture: skip reading them.
  if (!stages.some((s) => /texture_\w+\s*<\s*f32\s*>/.test(s.source) && /\bsampler\s*;/.test(s.source))) return;
  const byGroup = new Map<number, Set<number>>();
  for (const { stage, source, entryPoint, constants } of stages) {
    for (const key of filterableTextureBindings(source, entryPoint, stage, constants ?? {}) ?? []) {
      const [group, binding] = key.split(':').map(Number);
      byGroup.set(group, (byGroup.get(group) ?? new Set()).add(binding));
    }
  }
  pipelineFloats.set(pipeline, byGroup.size > 0 ? byGroup : null);
}

/** Remembers the 'float' textures of `layout`, group `index` of `pipeline`'s 'auto' layout. */
export function noteAutoLayout(layout: GPUBindGroupLayout, pipeline: object, index: number): void {
  const bindings = pipelineFloats.get(pipeline)?.get(index);
  if (bindings) layoutFloats.set(layout, bindings);
}

/** 'float' when `binding` of an 'auto' `layout` is a texture its pipeline samples as filterable float; undefined when not or unknown. */
export function autoLayoutSampleType(layout: GPUBindGroupLayout, binding: number): 'float' | undefined {
  return layoutFloats.get(layout)?.has(binding) ? 'float' : undefined;
}
