/**
 * Compiled pipelines outlive the job that made them.
 *
 * A job's pipelines are compiled when it creates them: for TF.js's RNN example on
 * SwiftShader that is 1.2–1.4 s of a 2.8 s job, and the next job of the same
 * program (a sweep's next point, a rerun) used to compile them all again, because
 * Dawn keeps a pipeline only while something holds it. When a job's session
 * closes, or it destroys a device, its compute and render pipelines come here
 * instead of being dropped, up to `RETAINED_PIPELINES` a device (the oldest go
 * first):
 *
 * - With an explicit layout, holding the pipeline is enough: Dawn finds an equal
 *   pipeline it still holds and hands it out without compiling (its own cache, by
 *   content). Such pipelines are never handed out from here.
 * - With layout 'auto', Dawn never shares, since a bind group made from one
 *   pipeline's 'auto' layout must not fit another pipeline. So `take` hands out a
 *   retained pipeline made from the same descriptor (its modules' WGSL, entry
 *   points, constants and, for render, every state) and removes it: it belongs
 *   to one job again, and a job never gets one of its own pipelines back while it
 *   can still use it (they come here only once the job ended or destroyed the
 *   device), so no two pipelines a job holds are one.
 * - Only pipelines made without an error are recorded (`made`), so an invalid one
 *   never spares a later job its error.
 *
 * A pipeline is immutable and was checked against the job's own limits before it
 * was created or taken, so a job cannot tell a retained one from a new one but
 * by its speed; its label is set to the new job's.
 */
import { createHash } from 'node:crypto';
import { isObjectRef } from '../protocol/objectRefs.js';
import { deviceErrorCount } from './errorScopes.js';
import { shaderSource } from './jobLimits.js';
import type { Entry } from './objects.js';

/**
 * Pipelines kept per device after their jobs ended: several programs' worth (TF.js's zoo examples make 20–45 each).
 * Each holds compiled code in the service's memory: about 0.42 MiB on SwiftShader (500 small compute kernels held
 * in one process grew its RSS by 217 MiB), so at most about 110 MiB there, far less where a driver compiles.
 */
export const RETAINED_PIPELINES = 256;

export type Pipeline = GPUComputePipeline | GPURenderPipeline;

/** A digest of each module's WGSL, made the first time one of its pipelines is looked up. */
const codeDigests = new WeakMap<GPUShaderModule, string>();

/** `module`'s digest, or null for a module whose WGSL is unknown (not made through jobLimits' noteShaderModule). */
function digestOf(module: GPUShaderModule): string | null {
  let digest = codeDigests.get(module);
  if (digest === undefined) {
    const code = shaderSource(module);
    if (code === undefined) return null;
    digest = createHash('sha256').update(code).digest('base64');
    codeDigests.set(module, digest);
  }
  return digest;
}

/** Constants in a stable order (the same constants give the same key, whatever order the job wrote them in). */
function constantsKey(constants: Readonly<Record<string, number>> | undefined): string {
  return constants === undefined ? '' : JSON.stringify(Object.entries(constants).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The key of a compute pipeline of layout 'auto' made from `module`, or null where its WGSL is unknown. */
export function computePipelineKey(module: GPUShaderModule, entryPoint: string | undefined, constants: Readonly<Record<string, number>> | undefined): string | null {
  const digest = digestOf(module);
  return digest === null ? null : `compute\u0000${digest}\u0000${entryPoint ?? ''}\u0000${constantsKey(constants)}`;
}

/**
 * The key of a render pipeline of layout 'auto' from its descriptor as the job sent it (objects as references,
 * core/protocol/objectRefs.ts; `moduleOf` resolves one, in the job's table): every state, each module as its WGSL's
 * digest and each stage's constants in a stable order. Null unless the layout is 'auto' and every object it names
 * is a shader module whose WGSL is known.
 */
export function renderPipelineKey(descriptor: Readonly<Record<string, unknown>>, moduleOf: (id: number) => GPUShaderModule): string | null {
  if (descriptor.layout !== 'auto') return null;
  let known = true;
  const keyed = JSON.stringify(descriptor, function replace(this: unknown, name, value: unknown) {
    if (isObjectRef(value)) {
      const digest = value.$kind === 'shaderModule' ? digestOf(moduleOf(value.$ref)) : null;
      if (digest === null) known = false;
      return { module: digest };
    }
    if (name === 'constants' && value !== null && typeof value === 'object') return constantsKey(value as Record<string, number>);
    // Labels compile to nothing.
    return name === 'label' ? undefined : value;
  });
  return known ? `render\u0000${keyed}` : null;
}

/** How a pipeline was made: its 'auto' key, or null for an explicit layout. Absent: made with an error, or unknown. */
const keys = new WeakMap<Pipeline, string | null>();

export class PipelinePool {
  /** Every retained pipeline and its key, oldest first. */
  private readonly retained = new Map<Pipeline, string | null>();
  /** Retained 'auto' pipelines by key, most recently retained last. */
  private readonly idle = new Map<string, Pipeline[]>();
  /** Pipelines handed out (`take`). */
  reused = 0;

  constructor(private readonly capacity = RETAINED_PIPELINES) {}

  /** How many are retained now. */
  get size(): number {
    return this.retained.size;
  }

  /**
   * A retained pipeline of `key` (computePipelineKey, renderPipelineKey; the key says which kind), now the
   * caller's alone, or null (then the caller creates one and passes it to `made`).
   */
  take<P extends Pipeline>(key: string): P | null {
    const list = this.idle.get(key);
    const pipeline = list?.pop();
    if (pipeline === undefined) return null;
    if (list!.length === 0) this.idle.delete(key);
    this.retained.delete(pipeline);
    this.reused++;
    return pipeline as P;
  }

  /** Records a pipeline a job just made without an error: `key` for layout 'auto', null for an explicit layout. */
  made(pipeline: Pipeline, key: string | null): void {
    keys.set(pipeline, key);
  }

  /**
   * A pipeline `create` makes on `device` now, recorded (`made`) unless Dawn raised an error making it: Dawn raises
   * a pipeline's error inside the call that made it (errorScopes.ts), so an unchanged count says there was none.
   */
  created<P extends Pipeline>(device: GPUDevice, key: string | null, create: () => P): P {
    const errorsBefore = deviceErrorCount(device);
    const pipeline = create();
    if (deviceErrorCount(device) === errorsBefore) this.made(pipeline, key);
    return pipeline;
  }

  /** A job's table entry it can no longer use: kept (`retain`) when it is a pipeline. */
  retainEntry(entry: Entry | undefined): void {
    if ((entry?.kind === 'computePipeline' || entry?.kind === 'renderPipeline') && entry.obj) this.retain(entry.obj);
  }

  /** A pipeline the job can no longer use: kept for later jobs (the oldest retained one goes past the capacity). */
  retain(pipeline: Pipeline): void {
    const key = keys.get(pipeline);
    if (key === undefined || this.retained.has(pipeline) || this.capacity <= 0) return;
    this.retained.set(pipeline, key);
    if (key !== null) {
      const list = this.idle.get(key);
      if (list) list.push(pipeline);
      else this.idle.set(key, [pipeline]);
    }
    for (const [oldest, oldestKey] of this.retained) {
      if (this.retained.size <= this.capacity) break;
      this.retained.delete(oldest);
      if (oldestKey === null) continue;
      const list = this.idle.get(oldestKey)!;
      list.splice(list.indexOf(oldest), 1);
      if (list.length === 0) this.idle.delete(oldestKey);
    }
  }
}

const pools = new WeakMap<GPUDevice, PipelinePool>();

/** The pool of `device` (the shared device of one GPU). */
export function pipelinePoolOf(device: GPUDevice): PipelinePool {
  let pool = pools.get(device);
  if (!pool) pools.set(device, pool = new PipelinePool());
  return pool;
}
