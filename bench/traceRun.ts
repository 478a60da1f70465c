/**
 * A trace of jobs arriving over time, run on a fresh `salus serve`: what the
 * evaluation's experiments with arrivals share (E1's training jobs in
 * bench/evaluation/jct.ts, E3's inference servers in bench/evaluation/inference.ts).
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
import { expectSuccess, startService, type BenchService, type OutputLine, type SalusProcess, type SalusRun } from './harness.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { gpuOf, jobsOf, startSampler, type Sample } from './sampler.js';
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
  /** `salus serve` arguments (memory, policy) of the fresh service the trace runs on. */
  serveArgs: string[];
  /** Run on this service instead of a fresh one (`serveArgs` then unused); it is left running. */
  service?: BenchService;
  /** Knobs set on the policy before the first job. */
  params?: PolicyParams;
  /** When a started job is ready to wait for its arrival (default: admitted, state `running`). */
  ready?: (info: JobInfo, lines: readonly OutputLine[]) => boolean;
  /** How often the service's state is sampled while the trace runs. */
  sampleEveryMs?: number;
  /** Time between the last job's readiness and the trace's t0. */
  leadMs?: number;
  /** How long the jobs may run after t0 before the trace fails (default TRACE_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Fail the trace as soon as a job raises a GPU error none of its error scopes captured (e.g. out of memory). */
  failOnGpuErrors?: boolean;
}

/** A finished trace run: t0, each job's process and final `salus jobs` entry (trace order), samples. */
export interface TraceRunResult {
  t0: number;
  gpu: GpuInfo | null;
  runs: SalusRun[];
  infos: JobInfo[];
  samples: Sample[];
}

/** How long a trace may run after t0 unless `timeoutMs` says otherwise. */
export const TRACE_TIMEOUT_MS = 300_000;

/** A job's last stdout lines, for a failure message. */
function tailOf(lines: readonly OutputLine[], count = 3): string {
  return lines.slice(-count).map((line) => `    ${line.text.slice(0, 300)}`).join('\n') || '    (no output)';
}

/**
 * Runs `trace` on a fresh service (or `options.service`). Throws, never hangs, when a job exits non-zero, ends other than `done`,
 * raises an uncaptured GPU error (with `failOnGpuErrors`), or the trace outlives `timeoutMs`: the message
 * names the job(s), their last lines and the service's; every job process still alive is then stopped
 * (SIGTERM, which `salus run` passes on to its job, then SIGKILL).
 */
export async function runTrace(trace: readonly TraceEntry[], options: TraceRunOptions): Promise<TraceRunResult> {
  const service = options.service ?? await startService(options.serveArgs);
  const dir = mkdtempSync(join(tmpdir(), 'salus-trace-'));
  const startFile = join(dir, 'start');
  const processes: SalusProcess[] = [];
  let sampler: ReturnType<typeof startSampler> | null = null;
  let watching = true;
  try {
    const gpu = await gpuOf(service);
    if (options.params) await service.call('setPolicyParams', options.params);
    const runs: Promise<SalusRun>[] = [];
    const lines: (readonly OutputLine[])[] = [];
    // The first job to fail, as soon as it does: every wait below gives up on it.
    let failure: Error | null = null;
    let failed: (error: Error) => void = () => {};
    const failedEarly = new Promise<never>((_, reject) => {
      failed = (error) => {
        failure ??= error;
        reject(failure);
      };
    });
    failedEarly.catch(() => {});
    const orFail = async <T>(work: Promise<T>): Promise<T> => Promise.race([work, failedEarly]);
    const check = async <T>(poll: () => Promise<T | null>) => {
      if (failure) throw failure;
      return poll();
    };
    for (const job of trace) {
      const launch = job.launch(startFile);
      const process = service.run(launch.file, launch.jobArgs, ['--name', job.name, ...launch.salusArgs], launch.nodeFlags);
      processes.push(process);
      lines.push(process.lines);
      const done = process.done.then((run) => expectSuccess(run, job.name));
      done.catch((error: unknown) => failed(error instanceof Error ? error : new Error(String(error))));
      runs.push(done);
      // One at a time: admission (and so FIFO's order) follows the trace's.
      await waitFor(() => check(async () => ((await jobsOf(service)).some((info) => info.name === job.name && info.state === 'running') ? true : null)),
        90_000, `${job.name} to be admitted`, 50);
    }
    if (options.ready) {
      const ready = options.ready;
      await waitFor(() => check(async () => {
        const infos = await jobsOf(service);
        return trace.every((job, i) => {
          const info = infos.find((candidate) => candidate.name === job.name);
          return info !== undefined && ready(info, lines[i]);
        }) ? true : null;
      }), 120_000, 'every trace job to be ready', 100);
    }
    const t0 = Date.now() + (options.leadMs ?? 1500);
    writeFileSync(`${startFile}.tmp`, String(t0));
    renameSync(`${startFile}.tmp`, startFile);
    sampler = startSampler(service, options.sampleEveryMs);
    // While the jobs run: the deadline, and (if asked) GPU errors or a job that ended badly on the service's side.
    const timeoutMs = options.timeoutMs ?? TRACE_TIMEOUT_MS;
    void (async () => {
      while (watching && !failure) {
        await sleep(1000);
        if (!watching) return;
        const infos = await jobsOf(service).catch(() => [] as JobInfo[]);
        const broken = infos.find((info) => trace.some((job) => job.name === info.name)
          && (info.state === 'failed' || info.state === 'killed' || (options.failOnGpuErrors && (info.gpuErrors?.count ?? 0) > 0)));
        if (broken) {
          const first = broken.gpuErrors?.first;
          failed(new Error(`bench: ${broken.name} ${broken.state === 'failed' || broken.state === 'killed' ? `${broken.state}: ${broken.error ?? ''}` : `raised ${broken.gpuErrors!.count} GPU error(s), the first ${first?.type}: ${first?.message}`}`
            + `\n  its last lines:\n${tailOf(lines[trace.findIndex((job) => job.name === broken.name)])}`));
          return;
        }
        if (Date.now() - t0 > timeoutMs) {
          const waiting = trace.flatMap((job, i) => (processes[i].exited() ? [] : [`  ${job.name}, last lines:\n${tailOf(lines[i])}`]));
          failed(new Error(`bench: the trace ran past its ${Math.round(timeoutMs / 1000)} s limit; ${waiting.length} job(s) had not finished:\n${waiting.join('\n')}`
            + `\n--- salus serve (last lines)\n${service.log().slice(-1500)}`));
          return;
        }
      }
    })();
    const finished = await orFail(Promise.all(runs));
    watching = false;
    const samples = (await sampler.stop()).filter((s) => s.at >= t0);
    sampler = null;
    const all = await jobsOf(service);
    const infos = trace.map((job) => {
      const info = all.find((candidate) => candidate.name === job.name);
      if (!info || info.finishedAt === null || info.state !== 'done') throw new Error(`bench: ${job.name} did not finish: ${JSON.stringify(info)}`);
      return info;
    });
    return { t0, gpu, runs: finished, infos, samples };
  } finally {
    watching = false;
    await sampler?.stop();
    // Jobs still waiting for their arrival (the trace failed before it began) go now, and fail without a service.
    if (!existsSync(startFile)) writeFileSync(startFile, String(Date.now()));
    await stopAll(processes);
    if (!options.service) await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Stops every process still alive: SIGTERM, then SIGKILL for those alive 5 s later. */
async function stopAll(processes: readonly SalusProcess[]): Promise<void> {
  const alive = processes.filter((p) => !p.exited());
  if (!alive.length) return;
  for (const p of alive) p.kill('SIGTERM');
  const settled = Promise.allSettled(alive.map((p) => p.done));
  if (await Promise.race([settled.then(() => true), sleep(5000).then(() => false)])) return;
  for (const p of alive) p.kill('SIGKILL');
  await Promise.race([settled, sleep(2000)]);
}

/** JCT of each job (finishedAt − arrival), trace order. */
export function jctsOf(trace: readonly TraceEntry[], result: TraceRunResult): number[] {
  return trace.map((job, i) => result.infos[i].finishedAt! - (result.t0 + job.arrivalMs));
}

/** Polls `check` every `everyMs` until it returns a value, or throws after `timeoutMs`. */
async function waitFor<T>(check: () => Promise<T | null>, timeoutMs: number, what: string, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
