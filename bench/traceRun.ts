/**
 * A trace of jobs arriving over time, run on a fresh `salus serve`: what the JCT
 * experiments share (bench/paper/jct.ts with its WGSL job, bench/evaluation/jct.ts
 * with the zoo's framework jobs).
 *
 * Arrivals: on a loaded 2-core machine a `salus run` takes 0.5–4 s to boot Node
 * and connect, so spawning a job at its arrival time scrambles the trace (and
 * differently under each policy). Instead every job is started and admitted
 * before the trace begins, in arrival order (so FIFO's "oldest" is the trace's
 * order), gets ready (`ready`), and waits for its arrival time: a start file,
 * written whole once all are ready, carries the trace's t0 (epoch ms). JCT =
 * finishedAt (from `salus jobs`: when the service returned the job's memory) −
 * arrival; submittedAt is the pre-start, so it is not used.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectSuccess, startService, type OutputLine, type SalusRun } from './harness.js';
import { gpuOf, jobsOf, startSampler, waitFor, type Sample } from './paper/common.js';
import type { GpuInfo, JobInfo } from '../core/protocol/state.js';
import type { PolicyParams } from '../core/scheduler/policy.js';

/** How one job of a trace is started, given the start file it must wait for. */
export interface TraceLaunch {
  /** The job script (under bench/jobs unless absolute). */
  file: string;
  jobArgs: string[];
  salusArgs: string[];
  nodeFlags?: string[];
}

/** One job of a trace. */
export interface TraceEntry {
  /** Unique in the trace: the service's job name. */
  name: string;
  /** Offset from the start of the trace, ms. */
  arrivalMs: number;
  launch(startFile: string): TraceLaunch;
}

export interface TraceRunOptions {
  /** `salus serve` arguments (memory, policy). */
  serveArgs: string[];
  /** Knobs set on the policy before the first job. */
  params?: PolicyParams;
  /** When a started job is ready to wait for its arrival (default: admitted, state `running`). */
  ready?: (info: JobInfo, lines: readonly OutputLine[]) => boolean;
  /** How often the service's state is sampled while the trace runs. */
  sampleEveryMs?: number;
  /** Time between the last job's readiness and the trace's t0. */
  leadMs?: number;
}

/** A finished trace run: t0, each job's process and final `salus jobs` entry (trace order), samples. */
export interface TraceRunResult {
  t0: number;
  gpu: GpuInfo | null;
  runs: SalusRun[];
  infos: JobInfo[];
  samples: Sample[];
}

/** Runs `trace` on a fresh service; throws if a job fails or does not end `done`. */
export async function runTrace(trace: readonly TraceEntry[], options: TraceRunOptions): Promise<TraceRunResult> {
  const service = await startService(options.serveArgs);
  const dir = mkdtempSync(join(tmpdir(), 'salus-trace-'));
  const startFile = join(dir, 'start');
  try {
    const gpu = await gpuOf(service);
    if (options.params) await service.call('setPolicyParams', options.params);
    const runs: Promise<SalusRun>[] = [];
    const lines: (readonly OutputLine[])[] = [];
    for (const job of trace) {
      const launch = job.launch(startFile);
      const process = service.run(launch.file, launch.jobArgs, ['--name', job.name, ...launch.salusArgs], launch.nodeFlags);
      lines.push(process.lines);
      const done = process.done.then((run) => expectSuccess(run, job.name));
      // Failures surface from Promise.all below; one before it must not crash the bench.
      done.catch(() => {});
      runs.push(done);
      // One at a time: admission (and so FIFO's order) follows the trace's.
      await waitFor(async () => ((await jobsOf(service)).some((info) => info.name === job.name && info.state === 'running') ? true : null),
        90_000, `${job.name} to be admitted`, 50);
    }
    if (options.ready) {
      const ready = options.ready;
      await waitFor(async () => {
        const infos = await jobsOf(service);
        return trace.every((job, i) => {
          const info = infos.find((candidate) => candidate.name === job.name);
          return info !== undefined && ready(info, lines[i]);
        }) ? true : null;
      }, 120_000, 'every trace job to be ready', 100);
    }
    const t0 = Date.now() + (options.leadMs ?? 1500);
    writeFileSync(`${startFile}.tmp`, String(t0));
    renameSync(`${startFile}.tmp`, startFile);
    const sampler = startSampler(service, options.sampleEveryMs);
    const finished = await Promise.all(runs);
    const samples = (await sampler.stop()).filter((s) => s.at >= t0);
    const all = await jobsOf(service);
    const infos = trace.map((job) => {
      const info = all.find((candidate) => candidate.name === job.name);
      if (!info || info.finishedAt === null || info.state !== 'done') throw new Error(`bench: ${job.name} did not finish: ${JSON.stringify(info)}`);
      return info;
    });
    return { t0, gpu, runs: finished, infos, samples };
  } finally {
    // Jobs still waiting for their arrival (the trace failed before it began) go now, and fail without a service.
    if (!existsSync(startFile)) writeFileSync(startFile, String(Date.now()));
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** JCT of each job (finishedAt − arrival), trace order. */
export function jctsOf(trace: readonly TraceEntry[], result: TraceRunResult): number[] {
  return trace.map((job, i) => result.infos[i].finishedAt! - (result.t0 + job.arrivalMs));
}
