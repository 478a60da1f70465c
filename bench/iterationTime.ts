/**
 * Per-iteration time of the example jobs through the service vs on a local
 * device (issue 2, goal: within 10%).
 *
 * Each example (assets/jobs/wgsl-train.js, assets/jobs/tfjs-train.js) runs
 * unmodified inside bench/jobs/timed.js, which stamps every `{"step"}` line
 * with the time it was printed; with `--log-every 1` that is the end of each
 * training step (its loss read back). Per-iteration time = the gap between
 * consecutive steps, after `warmup` steps. Runs alternate `salus run` and
 * `salus run --local` in ABBA order, `repeats` of each, on one idle service; the
 * final loss and checksum of every run must agree (same numbers either way).
 */
import { cpuBusyBetween, expectSuccess, startCpuSampler, startService, type BenchService, type CpuReading, type SalusRun } from './harness.js';
import { medianP90, type BenchResult, type TableRow } from './report.js';
import { diffs, quantile, round, rounded, summarize } from './stats.js';

export interface ExampleSpec {
  name: string;
  /** The example, relative to the repository root. */
  file: string;
  iterations: number;
  /** More arguments for the example (e.g. its size). */
  args?: string[];
  /** Steps left out at the start (pipeline compiles, allocator warm-up). */
  warmup: number;
  /** Runs per mode. */
  repeats: number;
  /**
   * How the example is told its length and to print every iteration; default
   * `--iterations N --log-every 1`. An example printing `{"request"}` lines instead of
   * `{"step"}` lines (ort-serve.js) is timed by those.
   */
  lengthArgs?: (iterations: number) => string[];
  /** Flags for the node of `salus run` (passed on to the job's), e.g. `--liftoff-only`. */
  nodeFlags?: string[];
}

export interface IterationOptions {
  examples: ExampleSpec[];
}

/**
 * The WGSL example at three sizes: its default (≈2 ms iterations here, where the
 * service's fixed cost per iteration shows), and two where an iteration is
 * tens and hundreds of milliseconds, as training steps usually are.
 */
export const ITERATION_DEFAULTS: IterationOptions = {
  examples: [
    { name: 'WGSL 64×32', file: 'assets/jobs/wgsl-train.js', iterations: 200, warmup: 40, repeats: 5 },
    { name: 'WGSL 512×64', file: 'assets/jobs/wgsl-train.js', args: ['--batch', '512', '--hidden', '64'], iterations: 80, warmup: 20, repeats: 3 },
    { name: 'WGSL 2048×128', file: 'assets/jobs/wgsl-train.js', args: ['--batch', '2048', '--hidden', '128'], iterations: 40, warmup: 10, repeats: 3 },
    { name: 'TF.js', file: 'assets/jobs/tfjs-train.js', iterations: 40, warmup: 10, repeats: 4 },
  ],
};

type Mode = 'salus' | 'local';

interface ModeRun {
  mode: Mode;
  iterationMs: number[];
  /** The gaps before `warmup` (from the end of step 1: step 0 also compiles every pipeline): the run's start-up. */
  earlyMs: number[];
  final: { loss: number; checksum: number } | null;
  /** The service's own average iteration time for this job (salus mode only). */
  serviceAvgIterationMs?: number | null;
  /** The machine's CPU ms (all cores, all processes) per steady iteration, and the cores busy meanwhile; null when unread. */
  cpuMsPerIteration: number | null;
  coresBusy: number | null;
}

/** A `{"step"}` or `{"request"}` line's index (ort-serve.js prints requests), or null for any other line. */
function stepIndex(json: Record<string, any> | null): number | null {
  return typeof json?.step === 'number' ? json.step : typeof json?.request === 'number' ? json.request : null;
}

/** timed.js's arguments for `spec`: the example, its length (`--iterations N --log-every 1` by default) and its own. */
function exampleArgs(spec: ExampleSpec): string[] {
  const lengthArgs = spec.lengthArgs?.(spec.iterations) ?? ['--iterations', String(spec.iterations), '--log-every', '1'];
  return [spec.file, ...lengthArgs, ...(spec.args ?? [])];
}

function parseRun(mode: Mode, run: SalusRun, spec: ExampleSpec, cpu: readonly CpuReading[]): ModeRun {
  const steps = run.lines.flatMap((line) => (stepIndex(line.json) === null ? [] : [line.json!]));
  if (steps.length !== spec.iterations) throw new Error(`bench: ${spec.name} (${mode}) printed ${steps.length} of ${spec.iterations} steps`);
  const stamps = steps.filter((s) => stepIndex(s)! >= spec.warmup).map((s) => s.t as number);
  const earlyStamps = steps.filter((s) => stepIndex(s)! >= 1 && stepIndex(s)! <= spec.warmup).map((s) => s.t as number);
  const finalLine = run.lines.find((line) => line.json?.final)?.json?.final ?? null;
  const [first, last] = [stamps[0], stamps.at(-1)];
  const busyMs = stamps.length > 1 ? cpuBusyBetween(cpu, first, last!) : null;
  return {
    mode, iterationMs: diffs(stamps), earlyMs: diffs(earlyStamps), final: finalLine,
    cpuMsPerIteration: busyMs === null ? null : busyMs / (stamps.length - 1),
    coresBusy: busyMs === null ? null : busyMs / (last! - first),
  };
}

async function runOnce(service: BenchService, spec: ExampleSpec, mode: Mode, k: number): Promise<ModeRun> {
  const args = exampleArgs(spec);
  const nodeFlags = spec.nodeFlags ?? [];
  const cpu = startCpuSampler();
  if (mode === 'local') {
    const run = await service.runLocal('timed.js', args, nodeFlags).done;
    return parseRun(mode, expectSuccess(run, `${spec.name} --local`), spec, cpu.stop());
  }
  const name = `${spec.name.replace(/[^A-Za-z0-9.]+/g, '-')}-${k}`;
  const run = expectSuccess(await service.run('timed.js', args, ['--name', name], nodeFlags).done, `${spec.name} via salus`);
  const readings = cpu.stop();
  const jobs = await service.call<{ name: string; avgIterationMs: number | null }[]>('jobs');
  return { ...parseRun(mode, run, spec, readings), serviceAvgIterationMs: jobs.find((job) => job.name === name)?.avgIterationMs ?? null };
}

function sameNumbers(runs: ModeRun[]): boolean {
  const [first] = runs;
  return runs.every((run) => run.final !== null && first.final !== null
    && run.final.loss === first.final.loss && run.final.checksum === first.final.checksum);
}

/**
 * Runs `spec` `repeats` times in each mode, ABBA, on `service`: per-iteration
 * summaries per mode, their ratio (service / local), paired ratios, and whether
 * every run printed the same final numbers.
 */
export async function benchExample(service: BenchService, spec: ExampleSpec) {
  const runs: ModeRun[] = [];
  for (let k = 0; k < spec.repeats; k++) {
    // ABBA: drift in the machine's load hits both modes alike.
    const order: Mode[] = k % 2 === 0 ? ['salus', 'local'] : ['local', 'salus'];
    for (const mode of order) runs.push(await runOnce(service, spec, mode, k));
  }
  const of = (mode: Mode) => runs.filter((run) => run.mode === mode);
  const salus = summarize(of('salus').flatMap((run) => run.iterationMs));
  const local = summarize(of('local').flatMap((run) => run.iterationMs));
  const earlyOf = (mode: Mode) => {
    const gaps = of(mode).flatMap((run) => run.earlyMs);
    return gaps.length > 0 ? summarize(gaps) : null;
  };
  const pairedRatios = of('salus').map((run, k) => quantile(run.iterationMs, 0.5) / quantile(of('local')[k].iterationMs, 0.5));
  /** Per mode, the median over its runs of CPU ms per iteration and cores busy (null when a run was unread). */
  const cpuOf = (mode: Mode) => {
    const readings = of(mode).filter((run) => run.cpuMsPerIteration !== null && run.coresBusy !== null);
    if (readings.length === 0) return null;
    return {
      msPerIteration: quantile(readings.map((run) => run.cpuMsPerIteration!), 0.5),
      coresBusy: quantile(readings.map((run) => run.coresBusy!), 0.5),
    };
  };
  return {
    spec, salus, local,
    /** Iterations 1 to `warmup` (start-up: code not yet compiled in either process, pools filling). */
    early: { salus: earlyOf('salus'), local: earlyOf('local') },
    cpu: { salus: cpuOf('salus'), local: cpuOf('local') },
    ratio: salus.median / local.median,
    ratioP90: salus.p90 / local.p90,
    pairedRatios,
    pairedRatioMedian: quantile(pairedRatios, 0.5),
    sameNumbers: sameNumbers(runs),
    serviceAvgIterationMs: of('salus').map((run) => run.serviceAvgIterationMs ?? null),
    finals: runs.map((run) => ({ mode: run.mode, ...run.final })),
  };
}

/** The steady iterations' GPU time of one instrumented run (ms, median per iteration), or null where none was read. */
function gpuMsPerIteration(run: SalusRun, spec: ExampleSpec): number | null {
  const submits = run.lines.find((line) => Array.isArray(line.json?.gpuSubmits))?.json?.gpuSubmits as [number, number][] | undefined;
  if (!submits || submits.length === 0) return null;
  const ends = run.lines.flatMap((line) => (stepIndex(line.json) !== null && stepIndex(line.json)! >= spec.warmup ? [line.json!.t as number] : []));
  const perIteration: number[] = [];
  // An iteration's submits are those made after the previous iteration's line and before its own.
  for (let i = 1, k = 0; i < ends.length; i++) {
    let us = 0;
    while (k < submits.length && submits[k][0] <= ends[i - 1]) k++;
    while (k < submits.length && submits[k][0] <= ends[i]) us += submits[k++][1];
    perIteration.push(us / 1000);
  }
  return perIteration.length > 0 ? quantile(perIteration, 0.5) : null;
}

/**
 * The GPU's own time per steady iteration, from timestamp queries around every submit (timed.js
 * `--gpu-times`), in one instrumented run per mode: whether the service's iterations take longer because
 * the GPU executes the same work more slowly (on a software GPU its threads share the CPU with the job's
 * and the service's) or because of the path to it. The extra passes make these runs unfit for wall time.
 */
export async function gpuTimePerIteration(service: BenchService, spec: ExampleSpec): Promise<{ local: number | null; salus: number | null }> {
  const args = ['--gpu-times', ...exampleArgs(spec)];
  const nodeFlags = spec.nodeFlags ?? [];
  const local = expectSuccess(await service.runLocal('timed.js', args, nodeFlags).done, `${spec.name} --local --gpu-times`);
  const salus = expectSuccess(await service.run('timed.js', args, ['--name', `${spec.name}-gpu-times`], nodeFlags).done, `${spec.name} via salus, --gpu-times`);
  return { local: gpuMsPerIteration(local, spec), salus: gpuMsPerIteration(salus, spec) };
}

const signedMs = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms).toFixed(2)} ms`;

/** Runs every example in both modes on one fresh, otherwise idle service. */
export async function benchIterationTime(options: IterationOptions = ITERATION_DEFAULTS): Promise<BenchResult> {
  const service = await startService();
  try {
    const results = [];
    for (const spec of options.examples) results.push(await benchExample(service, spec));
    const rows: TableRow[] = results.map((r) => ({
      metric: `${r.spec.name} iteration (median / p90)${r.sameNumbers ? '' : ' RESULTS DIFFER'}`,
      salus: medianP90(r.salus), reference: medianP90(r.local),
      ratio: `${r.ratio.toFixed(2)} (paired ${r.pairedRatioMedian.toFixed(2)}; ${signedMs(r.salus.median - r.local.median)})`,
      goal: '≤1.10', met: r.sameNumbers && r.ratio <= 1.1,
    }));
    return {
      name: 'iteration time',
      method: 'Examples run unmodified inside bench/jobs/timed.js with --log-every 1 (WGSL at batch×hidden sizes 64×32, its default, 512×64 and 2048×128); per-iteration time = gap between consecutive step lines after warm-up; salus run and salus run --local alternate ABBA; ratio = median(salus) / median(local) over all steady iterations; paired = median over repeats of each salus run\'s median / its local partner\'s; ± ms = what the service adds to a median iteration.',
      rows,
      data: Object.fromEntries(results.map((r) => [r.spec.name, {
        ...r.spec,
        salusMs: rounded(r.salus),
        localMs: rounded(r.local),
        ratio: round(r.ratio),
        /** What the service adds to a median iteration, in ms. */
        addedMs: round(r.salus.median - r.local.median),
        ratioP90: round(r.ratioP90),
        pairedRatios: r.pairedRatios.map((x) => round(x)),
        pairedRatioMedian: round(r.pairedRatioMedian),
        serviceAvgIterationMs: r.serviceAvgIterationMs.map((x) => (x === null ? null : round(x))),
        sameNumbers: r.sameNumbers,
        finals: r.finals,
      }])),
    };
  } finally {
    await service.stop();
  }
}
