/**
 * Compiled compute pipelines outlive the job that made them.
 *
 * A job's pipelines are compiled when it creates them: for TF.js's RNN example on
 * SwiftShader that is 1.2–1.4 s of a 2.8 s job, and the next job of the same
 * program (a sweep's next point, a rerun, a restarted inference server) used to
 * compile them all again, because Dawn keeps a pipeline only while something holds
 * it. When a job's session closes, its compute pipelines come here instead of
 * being dropped, up to `RETAINED_PIPELINES` a device (the oldest go first):
 *
 * - With an explicit layout, holding the pipeline is enough: Dawn finds an equal
 *   pipeline it still holds and hands it out without compiling (its own cache, by
 *   content). Such pipelines are never handed out from here.
 * - With layout 'auto', Dawn never shares, since a bind group made from one
 *   pipeline's 'auto' layout must not fit another pipeline. So `take` hands out a
 *   retained pipeline of the same module source, entry point and constants, and
 *   removes it: it belongs to one job again, and a job never gets one of its own
 *   earlier pipelines back (they come here only once the job has ended), so no
 *   two pipelines a job holds are one.
 *
 * A pipeline is immutable and was checked against the job's own limits before it
 * was created or taken, so a job cannot tell a retained one from a new one but
 * by its speed; its label is set to the new job's.
 */
import { createHash } from 'node:crypto';

/**
 * Compute pipelines kept per device after their jobs ended: several programs' worth (TF.js's zoo examples make
 * 20–45 each). Each holds compiled code in the service's memory: about 0.42 MiB on SwiftShader (500 small kernels
 * held in one process grew its RSS by 217 MiB), so at most about 110 MiB there, far less where a driver compiles.
 */
export const RETAINED_PIPELINES = 256;

/** What an 'auto' pipeline is made from: the same key compiles to the same pipeline. */
export interface AutoPipelineSource {
  /** The WGSL the module was made from. */
  code: string;
  entryPoint: string | undefined;
  constants: Readonly<Record<string, number>> | undefined;
}

/** A digest of each module's code, made the first time one of its pipelines is looked up. */
const codeDigests = new WeakMap<GPUShaderModule, string>();

/** The key of an 'auto' pipeline of `module` (whose WGSL is `source.code`). */
function autoKey(module: GPUShaderModule, source: AutoPipelineSource): string {
  let digest = codeDigests.get(module);
  if (digest === undefined) {
    digest = createHash('sha256').update(source.code).digest('base64');
    codeDigests.set(module, digest);
  }
  const constants = source.constants === undefined ? '' : JSON.stringify(Object.entries(source.constants).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${digest}\u0000${source.entryPoint ?? ''}\u0000${constants}`;
}

/** How a pipeline was made: its 'auto' key, or null for an explicit layout. */
const keys = new WeakMap<GPUComputePipeline, string | null>();

export class PipelinePool {
  /** Every retained pipeline and its key, oldest first. */
  private readonly retained = new Map<GPUComputePipeline, string | null>();
  /** Retained 'auto' pipelines by key, most recently retained last. */
  private readonly idle = new Map<string, GPUComputePipeline[]>();
  /** Pipelines handed out (`take`), for the log and the tests. */
  reused = 0;

  constructor(private readonly capacity = RETAINED_PIPELINES) {}

  /** How many are retained now. */
  get size(): number {
    return this.retained.size;
  }

  /**
   * A retained 'auto' pipeline made as `module` and `source` say (`source.code` is `module`'s WGSL: its digest is
   * kept per module), now the caller's alone, or null (then the caller creates one and passes it to `made`).
   */
  take(module: GPUShaderModule, source: AutoPipelineSource): GPUComputePipeline | null {
    const key = autoKey(module, source);
    const list = this.idle.get(key);
    const pipeline = list?.pop();
    if (pipeline === undefined) return null;
    if (list!.length === 0) this.idle.delete(key);
    this.retained.delete(pipeline);
    this.reused++;
    return pipeline;
  }

  /** Records how a pipeline a job just created was made (`source` for layout 'auto', null for an explicit one). */
  made(pipeline: GPUComputePipeline, module: GPUShaderModule, source: AutoPipelineSource | null): void {
    keys.set(pipeline, source === null ? null : autoKey(module, source));
  }

  /** A pipeline of a job that ended: kept for later jobs (the oldest retained one goes past the capacity). */
  retain(pipeline: GPUComputePipeline): void {
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
