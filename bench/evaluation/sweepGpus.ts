/**
 * E2 on one GPU and on two (issue 22): the quick E2 sweep (N copies of a zoo TF.js job, one after another and
 * all at once under PACK, bench/sweepRun.ts) on a fresh `salus serve --gpus 0` and a fresh `salus serve
 * --gpus all`, both with the same two software GPUs offered (bench/twinGpu.ts: SwiftShader and a renamed copy),
 * so the only difference is whether the service places the copies on one GPU or two. SwiftShader computes on
 * the machine's CPU cores, so two software GPUs share the cores one had: the figure says how much of a second
 * GPU's gain the CPU leaves (cores / cores busy all at once on one GPU bounds it).
 */
import { cpus } from 'node:os';
import { round } from '../stats.js';
import { secs, times } from '../report.js';
import { runSweep } from '../sweepRun.js';
import type { BenchResult, TableRow } from '../report.js';
import { makeTwinSwiftShader } from '../twinGpu.js';
import { spec, ZOO_SWEEP_DEFAULTS, ZOO_SWEEP_QUICK, type ZooSweep } from './sweep.js';

/** The sweep it runs: E2's quick one unless given. */
export const SWEEP_GPUS_DEFAULT: ZooSweep = (ZOO_SWEEP_QUICK.sweeps ?? ZOO_SWEEP_DEFAULTS.sweeps)[0];

/** Runs the sweep on one GPU, then on two; throws where no second software GPU can be made. */
export async function benchSweepGpus(sweep: ZooSweep = SWEEP_GPUS_DEFAULT, log: (line: string) => void = () => {}): Promise<BenchResult> {
  const twin = makeTwinSwiftShader();
  if ('reason' in twin) throw new Error(`bench sweep-gpus needs a second software GPU: ${twin.reason}`);
  const saved = process.env.VK_ICD_FILENAMES;
  // The services and their jobs inherit the bench's environment (bench/harness.ts).
  process.env.VK_ICD_FILENAMES = twin.env.VK_ICD_FILENAMES;
  try {
    const serve = ['--memory', '1GiB', '--policy', 'PACK'];
    const one = await runSweep(spec(sweep), 1, [...serve, '--gpus', '0'], (line) => log(`one GPU: ${line}`));
    const two = await runSweep(spec(sweep), 1, [...serve, '--gpus', 'all'], (line) => log(`two GPUs: ${line}`));
    const cores = cpus().length;
    const gain = round(one.packed.wallMakespanMs / two.packed.wallMakespanMs, 2);
    const cpuRoom = round(cores / Math.max(one.packed.coresBusy, 1e-9), 2);
    const rows: TableRow[] = [
      { metric: `E2 ${sweep.id} ×${sweep.jobs} on one GPU: alone / PACK (wall)`, salus: secs(one.packed.wallMakespanMs), reference: secs(one.sequential.wallMakespanMs), ratio: times(one.wallRatio), goal: '', met: null },
      { metric: `E2 ${sweep.id} ×${sweep.jobs} on two GPUs: alone / PACK (wall)`, salus: secs(two.packed.wallMakespanMs), reference: secs(two.sequential.wallMakespanMs), ratio: times(two.wallRatio), goal: '', met: null },
      {
        metric: `all at once: one GPU / two GPUs (wall; cores busy ${one.packed.coresBusy.toFixed(2)} and ${two.packed.coresBusy.toFixed(2)} of ${cores}: CPU room ${times(cpuRoom)})`,
        salus: secs(two.packed.wallMakespanMs), reference: secs(one.packed.wallMakespanMs), ratio: times(gain), goal: '', met: null,
      },
    ];
    log(`all at once: ${secs(one.packed.wallMakespanMs)} on one GPU, ${secs(two.packed.wallMakespanMs)} on two (${times(gain)}); cores busy ${one.packed.coresBusy.toFixed(2)} / ${two.packed.coresBusy.toFixed(2)} of ${cores}`);
    return {
      name: 'E2 sweep on one vs two GPUs',
      method: 'E2\'s quick sweep (bench/sweepRun.ts runSweep, one rep: one after another, then all at once under PACK) on a fresh salus serve --gpus 0 and a fresh salus serve --gpus all, both offered the same two software GPUs (bench/twinGpu.ts); the ratio of the all-at-once wall makespans is the second GPU\'s gain; cores / cores busy on one GPU bounds it on a software GPU.',
      rows,
      data: { sweep, cores, gain, cpuRoom, one: { ...one, reps: undefined }, two: { ...two, reps: undefined } },
    };
  } finally {
    if (saved === undefined) delete process.env.VK_ICD_FILENAMES;
    else process.env.VK_ICD_FILENAMES = saved;
    twin.remove();
  }
}
