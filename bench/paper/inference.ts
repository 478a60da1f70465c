/**
 * Experiment 3 (paper: 42 inference jobs — 14 models × 3 copies, batch 1, a
 * request every ~10 s — fit on 1 GPU with Salus in one lane, where plain TF needs
 * 42 GPUs and MPS 6, with under 5 ms of added latency).
 *
 * Each job is bench/paper/jobs/infer.js: persistent weights of P bytes, and per
 * request an ephemeral buffer of E bytes, a tiny kernel (batch 1) and a readback,
 * inside one SDK iteration; requests arrive open-loop every ~1 s (× U(0.5, 1.5)).
 * P and E are SALUS-NOTES' hint table scaled down (1 GB of the table → 256 KiB),
 * and the capacity C is the smallest whole MiB that holds Salus's one-lane need,
 * 1.1·ΣP + 1.05·max E, so Σ(P + E) is several times C. All 42 start on one
 * `salus serve --memory C --policy FAIR` set to one lane, work-conserving, no
 * hold; once every copy is admitted and warm, a barrier file lets them serve for
 * a fixed time together, and they exit together after it (a second barrier) so
 * no copy's exit slows the others' requests. The largest and the smallest model
 * each also run alone on the same service with the same request pattern, half
 * before the shared phase and half after: the solo latency.
 * MPS-style sharing needs Σ(P + E) ≤ C per GPU: computed by first-fit decreasing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type BenchService, type SalusRun } from '../harness.js';
import {
  bytesText, gpuOf, jobsOf, KiB, lastLine, mean, median, MiB, msText, p95, PAPER_JOBS_DIR, round, secs, sleep, startSampler,
  waitFor, type PaperResult,
} from './common.js';
import type { MemoryMap } from '../../core/protocol/state.js';

/** SALUS-NOTES' hint table: ephemeral and persistent, in GB. */
export const MODELS: readonly { name: string; ephemeralGb: number; persistentGb: number }[] = [
  { name: 'vgg-bs25', ephemeralGb: 5.0, persistentGb: 1.6 },
  { name: 'vgg-bs50', ephemeralGb: 8.2, persistentGb: 1.6 },
  { name: 'vgg-bs100', ephemeralGb: 11.2, persistentGb: 1.6 },
  { name: 'resnet-bs25', ephemeralGb: 5.3, persistentGb: 1.7 },
  { name: 'resnet-bs50', ephemeralGb: 8.6, persistentGb: 1.7 },
  { name: 'seq2seq-small', ephemeralGb: 0.079, persistentGb: 0.018 },
  { name: 'seq2seq-medium', ephemeralGb: 1.0, persistentGb: 0.08 },
  { name: 'seq2seq-large', ephemeralGb: 5.1, persistentGb: 0.343 },
  { name: 'superres-bs32', ephemeralGb: 0.253, persistentGb: 0.018 },
  { name: 'superres-bs64', ephemeralGb: 0.5, persistentGb: 0.032 },
  { name: 'superres-bs128', ephemeralGb: 0.993, persistentGb: 0.06 },
  { name: 'vae-bs64', ephemeralGb: 0.01, persistentGb: 0.021 },
  { name: 'vae-bs128', ephemeralGb: 0.01, persistentGb: 0.022 },
  { name: 'vae-bs256', ephemeralGb: 0.02, persistentGb: 0.023 },
];

export interface InferenceOptions {
  copies: number;
  /** Bytes per GB of the table. */
  bytesPerGb: number;
  intervalMs: number;
  jitter: number;
  /** How long all copies serve together. */
  durationMs: number;
  /** Models run alone afterwards, and for how long each. */
  soloModels: string[];
  soloDurationMs: number;
  /** Gap between spawning two jobs (spreads Node's start on a small machine). */
  spawnGapMs: number;
  /** Threads of the tiny kernel. */
  threads: number;
  seed: number;
}

export const INFERENCE_DEFAULTS: InferenceOptions = {
  copies: 3,
  bytesPerGb: 256 * KiB,
  intervalMs: 1000,
  jitter: 0.5,
  durationMs: 25_000,
  soloModels: ['vgg-bs100', 'vae-bs64'],
  soloDurationMs: 20_000,
  spawnGapMs: 150,
  threads: 256,
  seed: 42,
};

export const INFERENCE_QUICK: Partial<InferenceOptions> = { durationMs: 12_000, soloModels: ['vgg-bs100'], soloDurationMs: 10_000 };

const align = (bytes: number) => Math.max(256, Math.ceil(bytes / 256) * 256);
const paddedPersistent = (p: number) => p + Math.ceil(p / 10);
const paddedLane = (e: number) => e + Math.ceil(e / 20);

export interface Job {
  name: string;
  model: string;
  persistentBytes: number;
  ephemeralBytes: number;
}

/** GPUs of capacity C that run every job side by side (MPS: each needs P + E of its own), first-fit decreasing. */
export function mpsGpus(jobs: readonly Job[], capacityBytes: number): number {
  const bins: number[] = [];
  for (const size of jobs.map((j) => j.persistentBytes + j.ephemeralBytes).sort((a, b) => b - a)) {
    const bin = bins.findIndex((used) => used + size <= capacityBytes);
    if (bin >= 0) bins[bin] += size;
    else bins.push(size);
  }
  return bins.length;
}

interface Served {
  name: string;
  model: string;
  ok: boolean;
  error: string | null;
  requests: number;
  latencies: number[];
  lateness: number[];
  /** When each request was due, ms after the job's start. */
  at: number[];
  /** For a failed job: the end of the service's log. */
  serviceLog?: string;
}

function served(job: Job, run: SalusRun): Served {
  const done = lastLine(run.lines, 'latencies');
  const uncaptured = run.lines.find((l) => l.json && 'uncaptured' in l.json)?.json?.uncaptured as string | undefined;
  const ok = run.code === 0 && done !== null && !uncaptured;
  return {
    name: job.name,
    model: job.model,
    ok,
    error: ok ? null : (uncaptured ?? `exit ${run.code}: ${run.stderr.trim().slice(-1500)}`),
    requests: done?.requests ?? 0,
    latencies: done?.latencies ?? [],
    lateness: done?.lateness ?? [],
    at: done?.at ?? [],
    ...(ok || run.serviceLog === undefined ? {} : { serviceLog: run.serviceLog.slice(-3000) }),
  };
}

function startJob(service: BenchService, job: Job, options: InferenceOptions, durationMs: number, seed: number, barrier: { start: string; end: string } | null): Promise<SalusRun> {
  const hints = ['--persistent', String(job.persistentBytes), '--ephemeral', String(job.ephemeralBytes)];
  const args = [...hints, '--threads', String(options.threads), '--interval-ms', String(options.intervalMs), '--jitter', String(options.jitter),
    '--duration-ms', String(durationMs), '--seed', String(seed), ...(barrier ? ['--start-file', barrier.start, '--end-file', barrier.end] : [])];
  return service.run(join(PAPER_JOBS_DIR, 'infer.js'), args, ['--name', job.name, ...hints]).done;
}

function latencyStats(values: readonly number[]) {
  return { n: values.length, median: round(median(values), 2), p95: round(p95(values), 2), mean: round(mean(values), 2) };
}

export async function benchInference(overrides: Partial<InferenceOptions> = {}, log: (line: string) => void = () => {}): Promise<PaperResult> {
  const options: InferenceOptions = { ...INFERENCE_DEFAULTS, ...overrides };
  const jobs: Job[] = [];
  for (let copy = 0; copy < options.copies; copy++) {
    for (const model of MODELS) {
      jobs.push({
        name: `inf-${model.name}-${copy}`,
        model: model.name,
        persistentBytes: align(model.persistentGb * options.bytesPerGb),
        ephemeralBytes: align(model.ephemeralGb * options.bytesPerGb),
      });
    }
  }
  const sumP = jobs.reduce((s, j) => s + j.persistentBytes, 0);
  const sumE = jobs.reduce((s, j) => s + j.ephemeralBytes, 0);
  const maxE = Math.max(...jobs.map((j) => j.ephemeralBytes));
  const salusNeed = jobs.reduce((s, j) => s + paddedPersistent(j.persistentBytes), 0) + paddedLane(maxE);
  const capacityBytes = Math.ceil(salusNeed / MiB) * MiB;
  const mps = mpsGpus(jobs, capacityBytes);

  const dir = mkdtempSync(join(tmpdir(), 'salus-paper-inference-'));
  const barrier = { start: join(dir, 'start'), end: join(dir, 'end') };
  const service = await startService(['--memory', String(capacityBytes), '--policy', 'FAIR']);
  try {
    const gpu = await gpuOf(service);
    await service.call('setPolicyParams', { workConserving: true, holdMs: 0, maxLanes: 1 });

    // The solo reference: each solo model alone on this service, half of its time
    // before the shared phase and half after, so a drift in the machine's load
    // (it is shared) does not fall on one side only.
    const loads: Record<string, number> = { beforeSolo: loadavg()[0] };
    const runSolo = async (phase: 'before' | 'after'): Promise<Served[]> => {
      const out: Served[] = [];
      for (const model of options.soloModels) {
        const job = jobs.find((j) => j.model === model);
        if (!job) throw new Error(`bench paper inference: no model ${model}`);
        const soloJob = { ...job, name: `solo-${model}-${phase}` };
        out.push({ ...served(soloJob, await startJob(service, soloJob, options, options.soloDurationMs / 2, options.seed + 1000, null)), model });
      }
      log(`inference: solo runs ${phase} the shared phase done`);
      return out;
    };
    const solo: Served[] = await runSolo('before');

    // Start every copy; they warm up (one request each) and wait at the barrier.
    const runs: Promise<SalusRun>[] = [];
    const spawnStart = Date.now();
    for (const [i, job] of jobs.entries()) {
      runs.push(startJob(service, job, options, options.durationMs, options.seed + i, barrier));
      await sleep(options.spawnGapMs);
    }
    const names = new Set(jobs.map((j) => j.name));
    const atBarrier = await waitFor(async () => {
      const infos = (await jobsOf(service)).filter((info) => names.has(info.name));
      const settled = infos.filter((info) => (info.state === 'running' && info.iterations.done >= 1) || ['failed', 'killed', 'done'].includes(info.state));
      return infos.length === jobs.length && settled.length === jobs.length ? infos : null;
    }, 240_000, `all ${jobs.length} inference jobs to be admitted and warm`, 500);
    const readyMs = Date.now() - spawnStart;
    const memory = await service.call<MemoryMap>('memory');
    const admittedTogether = atBarrier.filter((info) => info.state === 'running').length;
    log(`inference: ${admittedTogether}/${jobs.length} admitted together after ${secs(readyMs, 1)}; serving ${secs(options.durationMs, 0)}`);

    const sampler = startSampler(service);
    const servingFrom = Date.now();
    loads.shared = loadavg()[0];
    writeFileSync(barrier.start, '');
    // Every copy stops sending at its start + durationMs (its last request is at most
    // one interval later); they exit together only after that.
    await sleep(options.durationMs + 2 * options.intervalMs);
    const samples = await sampler.stop();
    writeFileSync(barrier.end, '');
    const shared = (await Promise.all(runs)).map((run, i) => served(jobs[i], run));
    loads.afterShared = loadavg()[0];

    solo.push(...await runSolo('after'));

    const sharedLat = shared.flatMap((s) => s.latencies);
    const soloLat = solo.flatMap((s) => s.latencies);
    const sameModels = shared.filter((s) => options.soloModels.includes(s.model)).flatMap((s) => s.latencies);
    const sharedStats = latencyStats(sharedLat);
    const soloStats = latencyStats(soloLat);
    const sameStats = latencyStats(sameModels);
    const latenessShared = latencyStats(shared.flatMap((s) => s.lateness));
    const latenessSolo = latencyStats(solo.flatMap((s) => s.lateness));
    const failed = [...shared, ...solo].filter((s) => !s.ok);
    const perModel = Object.fromEntries(MODELS.map((m) => [m.name, latencyStats(shared.filter((s) => s.model === m.name).flatMap((s) => s.latencies))]));
    // Every copy serves from the barrier until about durationMs later.
    const window = samples.filter((s) => s.at > servingFrom + 1000 && s.at < servingFrom + options.durationMs - 1000);
    const minRunning = window.length ? Math.min(...window.map((s) => s.running)) : null;
    const busy = samples.map((s) => s.busyShare);
    // Seconds in which the one lane was never free: the backlog seconds where the tail comes from.
    const saturated = samples.filter((s) => s.busyShare >= 0.95).length;
    const overheadMedian = round(sharedStats.median - soloStats.median, 2);
    const overheadSame = round(sameStats.median - soloStats.median, 2);
    const overheadP95 = round(sharedStats.p95 - soloStats.p95, 2);
    const overheadMean = round(sharedStats.mean - soloStats.mean, 2);
    const signed = (v: number) => `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(1)} ms`;

    const summary = [
      `${jobs.length} jobs (${MODELS.length} models × ${options.copies}), table scaled 1 GB → ${options.bytesPerGb / KiB} KiB: ΣP ${bytesText(sumP)}, ΣE ${bytesText(sumE)}, max E ${bytesText(maxE)}`,
      `capacity C = ${bytesText(capacityBytes)} (Salus one-lane need 1.1·ΣP + 1.05·max E = ${bytesText(salusNeed)}); Σ(P+E) = ${bytesText(sumP + sumE)} = ${((sumP + sumE) / capacityBytes).toFixed(2)}×C`,
      `GPUs needed: Salus ${admittedTogether === jobs.length ? 1 : `? (only ${admittedTogether} admitted together)`} (${admittedTogether}/${jobs.length} admitted at once, ${memory.lanes.length} lane, ${bytesText(memory.usedBytes)} of C committed${minRunning === null ? '' : `, ≥${minRunning} running throughout`}); MPS-style ${mps} (first-fit Σ(P+E) ≤ C); no sharing ${jobs.length}. Paper: 1 / 6 / 42`,
      `requests: ${sharedLat.length} shared over ${secs(options.durationMs, 0)} (${(sharedLat.length / (options.durationMs / 1000)).toFixed(1)}/s), ${soloLat.length} solo; lane busy ${busy.length ? `${(100 * mean(busy)).toFixed(0)}%` : 'n/a'} while shared, ≥95% in ${saturated} of ${samples.length} one-second samples; load average ${loads.beforeSolo.toFixed(1)} → ${loads.shared.toFixed(1)} → ${loads.afterShared.toFixed(1)}`,
      `latency (send → result)   median      p95         mean`,
      `shared, all 42            ${msText(sharedStats.median).padEnd(12)}${msText(sharedStats.p95).padEnd(12)}${msText(sharedStats.mean)}`,
      `shared, solo's models     ${msText(sameStats.median).padEnd(12)}${msText(sameStats.p95).padEnd(12)}${msText(sameStats.mean)}`,
      `solo (${options.soloModels.join(', ')})`.padEnd(26) + ` ${msText(soloStats.median).padEnd(12)}${msText(soloStats.p95).padEnd(12)}${msText(soloStats.mean)}`,
      `overhead of sharing: median ${signed(overheadMedian)} (same models ${signed(overheadSame)}), mean ${signed(overheadMean)}, p95 ${signed(overheadP95)}; paper: < 5 ms average. Timer lateness (job-side CPU) median ${msText(latenessShared.median)} shared vs ${msText(latenessSolo.median)} solo, not in the latency`,
      ...(failed.length ? [`FAILED jobs: ${failed.map((f) => `${f.name}: ${f.error}`).join('; ')}`] : []),
    ];
    return {
      name: 'inference',
      method: '42 inference jobs (SALUS-NOTES hint table scaled, 3 copies of 14) with open-loop requests every ~1 s, one SDK iteration per request, all on one FAIR service with one work-conserving lane and capacity C sized to Salus\'s one-lane need; latency from send to read back, vs the same job alone on the idle service; MPS GPUs by first-fit decreasing of P+E into C.',
      headline: {
        jobs: jobs.length,
        capacityBytes,
        sumPersistentPlusEphemeralOverCapacity: round((sumP + sumE) / capacityBytes, 2),
        admittedTogether,
        salusGpus: admittedTogether === jobs.length ? 1 : null,
        mpsGpus: mps,
        noSharingGpus: jobs.length,
        sharedMedianMs: sharedStats.median,
        sharedP95Ms: sharedStats.p95,
        soloMedianMs: soloStats.median,
        soloP95Ms: soloStats.p95,
        overheadMedianMs: overheadMedian,
        overheadP95Ms: overheadP95,
        overheadMeanMs: overheadMean,
        failedJobs: failed.length,
        saturatedSeconds: saturated,
      },
      summary,
      gpu,
      data: {
        options, jobs, capacityBytes, salusNeed, loadAverages: loads, sumP, sumE, maxE, readyMs, memoryAtBarrier: memory,
        latency: { shared: sharedStats, sharedSameModels: sameStats, solo: soloStats, perModel, latenessShared, latenessSolo },
        failed: failed.map((f) => ({ name: f.name, error: f.error, serviceLog: f.serviceLog })),
        shared: shared.map(({ name, requests, latencies, lateness, at, ok }) => ({ name, ok, requests, latencies, lateness, at })),
        solo,
        samples,
      },
    };
  } finally {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
