/**
 * E2 (issue 10; paper: a hyper-parameter sweep of identical jobs finishes 2.38×
 * sooner with PACK than one job at a time — SuperRes; ResNet50 gains little) and
 * E6 for its mix, on the zoo's TensorFlow.js jobs.
 *
 * N copies of one zoo workload (each with its own seed, as a sweep's points
 * differ), run unmodified by `salus run` on a fresh `salus serve --policy PACK`:
 * one after another (each alone, the next spawned when the previous exits) and
 * all at once (PACK gives each a lane while they fit), alternating which side
 * goes first (bench/sweepRun.ts's `runSweep`). The headline is the wall
 * makespan, first spawn to last exit: Node's and TF.js's start of every copy
 * count, as TF's session start counted in the paper; the service-side makespan
 * (submittedAt to finishedAt) is beside it.
 *
 * E6.E2: the same copies all at once a third time, on a fresh `salus serve
 * --policy FAIR` set to one work-conserving lane (under PACK each copy has a lane
 * of its own, so Σ lanes = Σ E and the ratio is 1 by construction): Σ_j (P_j +
 * E_j), each copy's measured state between iterations and ephemeral peak
 * (MPS-style), over the most the service held, Σ P + Σ lane sizes sampled over
 * that run (./memory.ts). Its makespan is recorded beside PACK's.
 */
import { join } from 'node:path';
import { cpus } from 'node:os';
import { expectSuccess, ROOT, startService } from '../harness.js';
import { jobsOf } from '../sampler.js';
import { round } from '../stats.js';
import { runMode, runSweep, type ModeOutcome, type SweepSpec } from '../sweepRun.js';
import { lineChart, writeFigure } from '../figures.js';
import { secs, times, type BenchResult, type TableRow } from '../report.js';
import type { SummaryRow } from '../summary.js';
import { E6_DEFINITION, memoryOverRun, memorySeries, type MemoryOverRun } from './memory.js';

/** One sweep: a zoo workload, its copies and length. */
export interface ZooSweep {
  id: string;
  what: string;
  file: string;
  args: string[];
  jobs: number;
  iterations: number;
}

export interface ZooSweepOptions {
  sweeps: ZooSweep[];
  reps: number;
  figuresDir: string;
}

export const ZOO_SWEEP_DEFAULTS: ZooSweepOptions = {
  sweeps: [
    { id: 'tfjs-mlp', what: 'TF.js MLP, small', file: 'assets/jobs/tfjs-train.js', args: ['--size', 'small', '--log-every', '1'], jobs: 8, iterations: 30 },
    { id: 'tfjs-cnn', what: 'TF.js CNN, small', file: 'assets/jobs/tfjs-cnn.js', args: ['--size', 'small', '--log-every', '1'], jobs: 4, iterations: 12 },
  ],
  reps: 1,
  figuresDir: join(ROOT, 'docs'),
};

export const ZOO_SWEEP_QUICK: Partial<ZooSweepOptions> = {
  sweeps: [{ ...ZOO_SWEEP_DEFAULTS.sweeps[0], jobs: 4, iterations: 20 }],
};

/** The sweep as bench/sweepRun.ts runs it: each copy `salus run` with its own seed. */
export function spec(sweep: ZooSweep): SweepSpec {
  let seed = 0;
  return {
    jobs: sweep.jobs, iterations: sweep.iterations, label: sweep.id, sampleEveryMs: 250,
    start: (service, name) => service.run(join(ROOT, sweep.file), [...sweep.args, '--iterations', String(sweep.iterations), '--seed', String(++seed)],
      ['--name', name, '--iterations', String(sweep.iterations)]).done.then((run) => expectSuccess(run, `E2 ${name}`)),
  };
}

const FAIR_ONE_LANE = { workConserving: true, holdMs: 0, maxLanes: 1 };

/** The sweep's copies all at once on a fresh FAIR service with one lane: E6.E2's run. */
async function oneLaneRun(sweep: ZooSweep): Promise<{ mode: ModeOutcome; memory: MemoryOverRun | null }> {
  const service = await startService(['--memory', '1GiB', '--policy', 'FAIR']);
  try {
    await service.call('setPolicyParams', FAIR_ONE_LANE);
    const mode = await runMode(service, 'packed', spec(sweep), 0);
    const names = new Set(mode.jobs.map((j) => j.name));
    const infos = (await jobsOf(service)).filter((info) => names.has(info.name));
    return { mode, memory: memoryOverRun(infos, mode.samples) };
  } finally {
    await service.stop();
  }
}

/** Each sweep on a fresh PACK service; an E2 row each (the first is `E2`), and E6.E2 from the first. */
export async function benchZooSweep(overrides: Partial<ZooSweepOptions> = {}, log: (line: string) => void = () => {}): Promise<BenchResult> {
  const options: ZooSweepOptions = { ...ZOO_SWEEP_DEFAULTS, ...overrides };
  const outcomes = [];
  for (const sweep of options.sweeps) outcomes.push({ sweep, ...await runSweep(spec(sweep), options.reps, ['--memory', '1GiB', '--policy', 'PACK'], log) });

  const summaryRows: SummaryRow[] = [];
  const rows: TableRow[] = [];
  const cores = cpus().length;
  outcomes.forEach(({ sweep, sequential, packed, wallRatio, serviceRatio }, i) => {
    const r = wallRatio ?? 0;
    // The software GPU computes on the machine's cores: packing cannot beat cores / (cores busy one at a time).
    const cpuBound = cores / Math.max(sequential.coresBusy, 1e-9);
    summaryRows.push({
      id: i === 0 ? 'E2' : `E2.${sweep.id}`,
      what: `makespan of a sweep, ${sweep.jobs} copies of ${sweep.what} × ${sweep.iterations} steps: one after another / all at once under PACK (wall; service-side ${times(serviceRatio)}, up to ${packed.maxLanes} lanes; cores busy ${sequential.coresBusy.toFixed(2)} one at a time, ${packed.coresBusy.toFixed(2)} all at once, of ${cores}: CPU bound on the gain ${times(round(cpuBound, 2))})`,
      ours: round(packed.wallMakespanMs / 1000, 2), baseline: round(sequential.wallMakespanMs / 1000, 2), unit: 's', ratio: r,
      paper: '2.38× (SuperRes); ResNet50 little', ...(i === 0 ? { target: 2.0 } : {}),
    });
    rows.push({
      metric: `E2 ${sweep.id} ×${sweep.jobs} makespan alone / PACK (wall; service)`,
      salus: `${secs(packed.wallMakespanMs)}; ${secs(packed.serviceMakespanMs)}`, reference: `${secs(sequential.wallMakespanMs)}; ${secs(sequential.serviceMakespanMs)}`,
      ratio: `${times(wallRatio)}; ${times(serviceRatio)}`, goal: i === 0 ? '≥2.00' : '', met: i === 0 ? r >= 2 : null,
    });
  });

  const first = outcomes[0];
  const oneLane = await oneLaneRun(first.sweep);
  log(`E2 ${first.sweep.id} on one lane (FAIR): ${secs(oneLane.mode.wallMakespanMs)}, up to ${oneLane.mode.maxLanes} lane(s)`);
  const memory = oneLane.memory;
  if (memory) {
    summaryRows.push({
      id: 'E6.E2', what: `memory for the E2 mix (${first.sweep.jobs} × ${first.sweep.what}, all at once on one FAIR lane; makespan ${secs(oneLane.mode.wallMakespanMs)}): ${E6_DEFINITION}; ΣP ${memory.sumPKiB} KiB, ΣE ${memory.sumEKiB} KiB, max E ${memory.maxEKiB} KiB, up to ${memory.maxLanes} lane(s)`,
      ours: memory.oursKiB, baseline: memory.mpsKiB, unit: 'KiB', ratio: memory.ratio, paper: 'VGG16: 11.2 GB ephemeral vs 1.6 GB persistent', target: 1.5,
    });
    rows.push({ metric: 'E6.E2 Σ(P+E) / max(ΣP + Σ lanes), one FAIR lane', salus: `${memory.oursKiB} KiB`, reference: `${memory.mpsKiB} KiB`, ratio: times(memory.ratio), goal: '≥1.50', met: memory.ratio >= 1.5 });
    log(`E6.E2 (one lane): Σ(P+E) ${memory.mpsKiB} KiB (ΣP ${memory.sumPKiB}, ΣE ${memory.sumEKiB}, max E ${memory.maxEKiB}) / held ${memory.oursKiB} KiB = ${times(memory.ratio)}`);
  }
  const packedRun = first.reps[0].packed;
  const laneSamples = oneLane.mode.samples;
  writeFigure(join(options.figuresDir, 'e2-memory.svg'), lineChart({
    title: `E2: ${first.sweep.jobs} × ${first.sweep.what} at once on one lane (FAIR), memory held`, xLabel: 'time since the first copy was spawned (s)', yLabel: 'KiB',
    series: memorySeries(laneSamples, laneSamples[0]?.at ?? 0, memory),
  }));

  return {
    name: 'E2 sweep',
    method: 'N copies of a zoo TF.js workload (own seeds) on a fresh PACK service, after one untimed copy (whose compiled pipelines the service keeps for every later copy): one after another vs all at once, alternating (bench/sweepRun.ts runSweep); wall makespan = first spawn to last exit; service makespan = submittedAt to finishedAt (summed one at a time). E6.E2: the copies all at once again on a fresh FAIR service with one lane; Σ_j(P_j+E_j), P_j = max(the copy\'s stateBytes at the end, its sampled persistent peak), E_j = its ephemeral peak, over the most ΣP + Σ lanes the memory map (sampled every 250 ms) showed.',
    rows,
    summaryRows,
    data: { options: { ...options, figuresDir: undefined }, memory, oneLane: { ...oneLane.mode, samples: undefined }, packedMaxLanes: packedRun.maxLanes, sweeps: outcomes },
  };
}
