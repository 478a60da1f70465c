/**
 * `npm run bench`: the benchmarks of issues 2 and 10, side by side in one run
 * on this machine. Prints a summary table and writes everything measured, with
 * the environment, to `bench/results/<timestamp>.json` (git-ignored); the
 * evaluation's rows (E4, E5.*, …) go into `bench/results/summary.json`
 * (bench/summary.ts), whose table is printed last.
 *
 * Usage: `node dist/bench/run.js [--quick] [--only NAME[,NAME...]] [--figures DIR] [--results DIR] [--gpu [--allow-software]]`, NAME one of
 * jct (E1, E6.E1), sweep (E2, E6.E2), sweep-gpus (E2 on one vs two software GPUs), inference (E3), s1 (S1: the paper-shaped trace
 * through the simulator, seconds), switch (E4), overhead (E5),
 * iteration, upload, call-path, paging (the cost of a switch that pages), wire
 * (issue 19: the job-service wire against a local device, rows W1-W5). The
 * experiments on the zoo's framework jobs draw their figures into docs/ (with `--quick`, into bench/results/figures/; `--figures
 * DIR` says where). `--quick` runs fewer
 * samples, and only the evaluation's experiments unless `--only` says otherwise
 * (under 10 minutes on 2 cores). `--gpu` runs switch and overhead on a hardware
 * GPU and adds their rows as `.gpu` rows (./gpu.ts); it exits 3 on a software
 * adapter unless `--allow-software`. `--results DIR` puts this run's JSON there
 * instead (the summary stays in bench/results/). Needs `npm run build` (the bench runs the
 * compiled `salus`, as users do).
 *
 * The machine is shared and noisy: compare the ratios within one run (each
 * benchmark alternates its two sides), not absolute figures across runs.
 */
import { parseArgs } from 'node:util';
import { machineFacts, ROOT, serviceGpu } from './harness.js';
import { loadavg } from 'node:os';
import { formatTable, resultsDir, writeResults, type BenchResult } from './report.js';
import { benchSwitch, SWITCH_DEFAULTS, SWITCH_QUICK } from './switchLatency.js';
import { benchOverhead } from './overhead.js';
import { addSummaryRows, formatSummary, summaryPath } from './summary.js';
import { addGpuRows, GPU_BENCHES, gpuName, NO_HARDWARE_GPU } from './gpu.js';
import type { GpuInfo } from '../core/protocol/state.js';
import { benchIterationTime } from './iterationTime.js';
import { benchUpload } from './uploadThroughput.js';
import { benchCallPath } from './callPath.js';
import { benchWire, WIRE_DEFAULTS, WIRE_QUICK } from './wire.js';
import { benchPagingCost, PAGING_DEFAULTS, PAGING_QUICK } from './pagingCost.js';
import { benchZooJct, ZOO_JCT_QUICK } from './evaluation/jct.js';
import { benchZooSweep, ZOO_SWEEP_QUICK } from './evaluation/sweep.js';
import { benchZooInference, ZOO_INFERENCE_QUICK } from './evaluation/inference.js';
import { benchSimulated } from './evaluation/simulated.js';
import { benchSweepGpus } from './evaluation/sweepGpus.js';
import { join, resolve } from 'node:path';

/** Where the figures go: `--figures DIR`, else docs/ for a full run and beside the results for `--quick`. */
let figuresOverride: string | undefined;
const figuresDir = (quick: boolean) => figuresOverride ?? (quick ? join(ROOT, 'bench', 'results', 'figures') : join(ROOT, 'docs'));
const log = (line: string) => process.stdout.write(`\n  ${line}`);

/** Each benchmark, given `--quick`. */
const BENCHES: Record<string, (quick: boolean) => Promise<BenchResult>> = {
  jct: (quick) => benchZooJct({ ...(quick ? ZOO_JCT_QUICK : {}), figuresDir: figuresDir(quick) }, log),
  sweep: (quick) => benchZooSweep({ ...(quick ? ZOO_SWEEP_QUICK : {}), figuresDir: figuresDir(quick) }, log),
  'sweep-gpus': () => benchSweepGpus(undefined, log),
  inference: (quick) => benchZooInference({ ...(quick ? ZOO_INFERENCE_QUICK : {}), figuresDir: figuresDir(quick) }, log),
  s1: () => benchSimulated(log),
  switch: (quick) => benchSwitch(quick ? SWITCH_QUICK : SWITCH_DEFAULTS),
  overhead: (quick) => benchOverhead({ quick }),
  iteration: () => benchIterationTime(),
  upload: () => benchUpload(),
  'call-path': () => benchCallPath(),
  paging: (quick) => benchPagingCost(quick ? PAGING_QUICK : PAGING_DEFAULTS),
  wire: (quick) => benchWire(quick ? WIRE_QUICK : WIRE_DEFAULTS),
};

/** What `--quick` runs without `--only`: the experiments of issue 10 (their rows go into the summary). */
const QUICK_BENCHES = ['jct', 'sweep', 'inference', 's1', 'switch', 'overhead'];

/** What the figures depend on: the GPU the service opens, the CPUs, Node, the commit. */
function environment(gpu: GpuInfo) {
  return {
    adapter: gpu.description || `${gpu.vendor} ${gpu.device}`.trim(),
    backend: gpu.backend,
    isSoftware: gpu.isSoftware,
    ...machineFacts(),
  };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' }, quick: { type: 'boolean', default: false }, figures: { type: 'string' },
      gpu: { type: 'boolean', default: false }, 'allow-software': { type: 'boolean', default: false }, results: { type: 'string' },
    },
  });
  if (values.figures) figuresOverride = resolve(values.figures);
  const quick = values.quick ?? false;
  const onGpu = values.gpu ?? false;
  const choices = onGpu ? GPU_BENCHES : Object.keys(BENCHES);
  const names = values.only ? values.only.split(',').map((s) => s.trim()) : onGpu ? GPU_BENCHES : quick ? QUICK_BENCHES : choices;
  const unknown = names.filter((name) => !choices.includes(name));
  if (unknown.length) {
    process.stderr.write(`bench: unknown benchmark ${unknown.join(', ')}${onGpu ? ' with --gpu' : ''}; choose from ${choices.join(', ')}\n`);
    return 2;
  }

  const startedAt = new Date();
  const gpu = await serviceGpu();
  if (onGpu && gpu.isSoftware && !values['allow-software']) {
    process.stderr.write(`${NO_HARDWARE_GPU}\nAdapter: ${gpuName(gpu)}\n`);
    return 3;
  }
  const env = environment(gpu);
  process.stdout.write(`bench: ${env.adapter} (${env.backend}${env.isSoftware ? ', software GPU' : ''}), `
    + `${env.cpuCount} CPUs, Node ${env.node}, load ${env.loadAverage1m}\n`);
  const results: BenchResult[] = [];
  const failures: { name: string; error: string }[] = [];
  for (const name of names) {
    const t0 = performance.now();
    process.stdout.write(`bench: ${name}…`);
    try {
      results.push(await BENCHES[name](quick));
      process.stdout.write(` ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    } catch (error) {
      // One broken benchmark should not cost the figures of the others.
      const message = error instanceof Error ? error.message : String(error);
      failures.push({ name, error: message });
      process.stdout.write(` FAILED\n${message}\n`);
    }
  }

  const path = writeResults(values.results ? resolve(values.results) : resultsDir(ROOT), {
    startedAt: startedAt.toISOString(),
    durationS: Number(((Date.now() - startedAt.getTime()) / 1000).toFixed(1)),
    environment: { ...env, loadAverage1mAtEnd: Number(loadavg()[0].toFixed(2)) },
    results: results.map((r) => ({ name: r.name, method: r.method, rows: r.rows, data: r.data })),
    failures,
  }, startedAt);
  process.stdout.write(`\n${formatTable(results)}\n\nbench: results in ${path}\n`);
  const rows = results.flatMap((r) => r.summaryRows ?? []);
  if (rows.length) {
    const machine = { ...machineFacts(), quick };
    const summary = onGpu
      ? addGpuRows(summaryPath(ROOT), rows, gpuName(gpu), machine)
      : addSummaryRows(summaryPath(ROOT), rows, { machine, gpu: gpuName(gpu) });
    process.stdout.write(`\n${formatSummary(summary.rows)}\n\nbench: evaluation summary in ${summaryPath(ROOT)}\n`);
  }
  return failures.length ? 1 : 0;
}

process.exitCode = await main();
