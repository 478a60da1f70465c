/**
 * Job switch vs cold start (issue 2, goal: switching ≥100× faster).
 *
 * Switch: two copies of bench/jobs/resident-job.js, resident in one lane of a
 * FAIR service made work-conserving with no hold (so the lane passes to the
 * other job whenever it is waiting), alternate SDK iterations. Each job stamps
 * when its iteration was asked for (`begin`), when its first await inside the
 * iteration returned (`grant`: the service granted the lane and replayed the
 * iteration's first batch) and when `iteration()` resolved (`end`). Sorting all
 * iterations by grant, a switch is an iteration of one job following one of the
 * other job that it was already waiting on (begin < the other's end); its
 * latency is grant − the other's end.
 *
 * Cold start: the same job, with the same hints, in a fresh `salus run` on the
 * same (then idle) service: spawn to the end of its first iteration — CLI and
 * Node start, connect, device, weight upload, pipeline compile, one iteration.
 * A fresh `salus run --local` is timed the same way for reference.
 */
import { expectSuccess, startService, type BenchService, type SalusRun } from './harness.js';
import { medianP90, ms, type BenchResult } from './report.js';
import { rounded, summarize } from './stats.js';

export interface SwitchOptions {
  /** Iterations of each resident job. */
  iterations: number;
  /** Fresh `salus run` processes timed. */
  coldStarts: number;
  /** Fresh `salus run --local` processes timed, for reference. */
  localColdStarts: number;
  /** Weights of the job (MiB), uploaded at start and resident. */
  weightsMib: number;
  /** Kernel work per thread (sets the iteration length). */
  work: number;
}

export const SWITCH_DEFAULTS: SwitchOptions = { iterations: 40, coldStarts: 5, localColdStarts: 3, weightsMib: 64, work: 32 };
/** `npm run bench -- --quick`: the same job, fewer samples. */
export const SWITCH_QUICK: SwitchOptions = { ...SWITCH_DEFAULTS, iterations: 24, coldStarts: 3, localColdStarts: 1 };
/** Issue 10's target for E4: cold start / switch ≥ 500. */
const TARGET_E4 = 500;

interface Iteration {
  job: string;
  i: number;
  begin: number;
  grant: number;
  end: number;
}

/** The resident policy: FAIR in one lane, handing the lane over at once. */
const SWITCH_PARAMS = { workConserving: true, holdMs: 0, maxLanes: 1 };

function jobArgs(options: SwitchOptions, iterations: number): string[] {
  return ['--iterations', String(iterations), '--weights-mib', String(options.weightsMib), '--work', String(options.work)];
}

function hints(options: SwitchOptions, name: string): string[] {
  return ['--name', name, '--persistent', `${options.weightsMib + 1}MiB`, '--ephemeral', '1MiB'];
}

function iterations(run: SalusRun, job: string): Iteration[] {
  return run.events('iter').map((e) => ({ job, i: e.i, begin: e.begin, grant: e.grant, end: e.end }));
}

/** Switch latencies, same-job turnarounds and overlaps from both jobs' iterations. */
export function analyzeSwitches(all: Iteration[]) {
  const sorted = [...all].sort((a, b) => a.grant - b.grant);
  const switches: number[] = [];
  const sameJobGaps: number[] = [];
  let notWaiting = 0;
  let overlaps = 0;
  for (let k = 1; k < sorted.length; k++) {
    const prev = sorted[k - 1];
    const next = sorted[k];
    // First iterations start while the other job is still starting up: not a steady switch.
    if (prev.i === 0 || next.i === 0) continue;
    // Serialized in one lane, the next grant cannot precede the previous end by
    // more than the skew of two processes reading their replies.
    if (next.grant < prev.end - 1) overlaps++;
    if (next.job === prev.job) sameJobGaps.push(next.grant - prev.end);
    else if (next.begin < prev.end) switches.push(next.grant - prev.end);
    else notWaiting++;
  }
  return { switches, sameJobGaps, notWaiting, overlaps };
}

async function laneOfEach(service: BenchService, names: string[]): Promise<Record<string, string | null>> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const jobs = await service.call<{ name: string; state: string; lane: string | null }[]>('jobs');
    const mine = names.map((name) => jobs.find((job) => job.name === name));
    if (mine.every((job) => job?.state === 'running' && job.lane)) return Object.fromEntries(mine.map((job) => [job!.name, job!.lane]));
    if (mine.some((job) => job && ['done', 'failed', 'killed'].includes(job.state))) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return Object.fromEntries(names.map((name) => [name, null]));
}

interface ColdStart {
  totalMs: number;
  /** Spawn of `salus run` to the job module's process start. */
  processMs: number;
  deviceMs: number;
  uploadMs: number;
  compileMs: number;
  firstIterationMs: number;
}

function coldStart(run: SalusRun): ColdStart {
  const [ready] = run.events('ready');
  const [first] = run.events('iter');
  if (!ready || !first) throw new Error(`bench: cold-start job printed no ready/iter line:\n${run.stderr}`);
  return {
    totalMs: first.end - run.spawnedAt,
    processMs: ready.t0 - run.spawnedAt,
    deviceMs: ready.device - ready.t0,
    uploadMs: ready.uploaded - ready.device,
    compileMs: ready.compiled - ready.uploaded,
    firstIterationMs: first.end - ready.compiled,
  };
}

function summarizeColdStarts(starts: ColdStart[]) {
  const keys = ['totalMs', 'processMs', 'deviceMs', 'uploadMs', 'compileMs', 'firstIterationMs'] as const;
  return Object.fromEntries(keys.map((key) => [key, rounded(summarize(starts.map((s) => s[key])))]));
}

/** Runs the switch and cold-start measurements on a fresh service. */
export async function benchSwitch(options: SwitchOptions = SWITCH_DEFAULTS): Promise<BenchResult> {
  const service = await startService(['--policy', 'FAIR']);
  try {
    const policy = await service.call<{ knobs: { key: string }[] }>('policy');
    const missing = Object.keys(SWITCH_PARAMS).filter((key) => !policy.knobs.some((knob) => knob.key === key));
    if (missing.length) throw new Error(`bench: FAIR has no knob(s) ${missing.join(', ')}`);
    await service.call('setPolicyParams', SWITCH_PARAMS);

    const names = ['switch-a', 'switch-b'];
    const jobs = names.map((name) => service.run('resident-job.js', jobArgs(options, options.iterations), hints(options, name)));
    const lanes = await laneOfEach(service, names);
    const runs = await Promise.all(jobs.map((job, k) => job.done.then((run) => expectSuccess(run, names[k]))));
    const analysis = analyzeSwitches(runs.flatMap((run, k) => iterations(run, names[k])));
    const iterationMs = runs.flatMap((run) => run.events('iter').slice(1).map((e) => e.end - e.grant));

    // Cold starts on the now idle service, alternating with local ones.
    const cold: ColdStart[] = [];
    const localCold: ColdStart[] = [];
    for (let k = 0; k < Math.max(options.coldStarts, options.localColdStarts); k++) {
      if (k < options.coldStarts) {
        const run = expectSuccess(await service.run('resident-job.js', jobArgs(options, 1), hints(options, `cold-${k}`)).done, 'cold start');
        cold.push(coldStart(run));
      }
      if (k < options.localColdStarts) {
        localCold.push(coldStart(expectSuccess(await service.runLocal('resident-job.js', jobArgs(options, 1)).done, 'local cold start')));
      }
    }

    const switchSummary = summarize(analysis.switches);
    const coldSummary = summarize(cold.map((c) => c.totalMs));
    const localColdSummary = summarize(localCold.map((c) => c.totalMs));
    const ratio = coldSummary.median / switchSummary.median;
    const sameLane = lanes[names[0]] !== null && lanes[names[0]] === lanes[names[1]];
    return {
      name: 'job switch',
      method: 'Two resident SDK jobs alternate in one FAIR lane (workConserving, holdMs 0); switch = B grant − A end when B was waiting. Cold start = spawn of a fresh `salus run` of the same job to the end of its first iteration.',
      rows: [
        {
          metric: 'switch vs cold start (median / p90)', salus: medianP90(switchSummary), reference: medianP90(coldSummary),
          ratio: `${ratio.toFixed(0)}x`, goal: '≥100x', met: sameLane && analysis.switches.length > 0 && ratio >= 100,
        },
        {
          metric: 'cold start: salus run vs --local', salus: ms(coldSummary.median), reference: ms(localColdSummary.median),
          ratio: (coldSummary.median / localColdSummary.median).toFixed(2), goal: '', met: null,
        },
        {
          metric: 'switches observed (same lane?)', salus: `${analysis.switches.length} (${sameLane ? 'yes' : 'NO'})`,
          reference: '', ratio: '', goal: '', met: null,
        },
      ],
      summaryRows: [{
        id: 'E4',
        what: `cold start of a job in a fresh process / switch between two resident jobs (median${sameLane ? '' : '; NOT one lane'})`,
        ours: Number(switchSummary.median.toFixed(3)),
        baseline: Number(coldSummary.median.toFixed(1)),
        unit: 'ms',
        ratio: Number(ratio.toFixed(1)),
        paper: 'second-scale (checkpoint) vs iteration-scale',
        target: TARGET_E4,
      }],
      data: {
        options,
        policy: { name: 'FAIR', params: SWITCH_PARAMS },
        lanes,
        switchMs: rounded(switchSummary),
        sameJobGapMs: rounded(summarize(analysis.sameJobGaps)),
        notWaiting: analysis.notWaiting,
        overlaps: analysis.overlaps,
        iterationMs: rounded(summarize(iterationMs)),
        coldStart: summarizeColdStarts(cold),
        localColdStart: summarizeColdStarts(localCold),
        ratioColdToSwitch: Number(ratio.toFixed(1)),
        ratioColdToSwitchP90: Number((coldSummary.p90 / switchSummary.p90).toFixed(1)),
        samples: { switchMs: analysis.switches.map((v) => Number(v.toFixed(3))), coldMs: cold.map((c) => Number(c.totalMs.toFixed(1))) },
      },
    };
  } finally {
    await service.stop();
  }
}
