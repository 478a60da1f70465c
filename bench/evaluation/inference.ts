/**
 * E3 (issue 10; paper: 42 inference jobs — 14 models × 3, batch 1, a request
 * every ~10 s — on one GPU with Salus, where MPS needs 6 and no sharing 42) on
 * the zoo's ONNX Runtime Web servers (assets/jobs/ort-serve.js; by default the
 * MLP at batch 1, `--size small`), answering Poisson requests at the paper's low
 * rate (0.1 req/s each). On a 2-core software GPU the CPU is the bottleneck, so
 * the load per server must be the paper's, not more.
 *
 * 1. Each size alone on a fresh service (at `soloRatePerS`: alone a server queues
 *    nothing at either rate): its latency. The SLO is relative to it: p99 ≤
 *    max(sloFloorMs, sloSoloFactor × solo p99).
 * 2. For each count N of the ladder (full: 14, 28, 42; quick: 42), N servers on one fresh
 *    `salus serve --policy FAIR` set to one work-conserving lane; all are started
 *    and ORT loaded first (bench/traceRun.ts, node --liftoff-only), then released
 *    `staggerMs` apart; each sends the requests of its seeded Poisson schedule
 *    that arrive within `durationS` of its warm-up; a request counts when it
 *    arrived after every server was warm and before the first schedule ended. N meets the SLO when the p99 of those requests'
 *    latency (arrival to answer read back) is within it; the ladder stops at the
 *    first N that misses. C = the most the service held for them (Σ P + Σ lanes,
 *    sampled; memory is not capped: ORT's first run asks for more than its
 *    steady peak). Each server's MPS-style need is its own P + E in that same run
 *    (P the larger of its stateBytes and its sampled persistent peak, E its ephemeral peak: ./memory.ts).
 * Jobs per device: ours = the largest N that met the SLO; one job per device = 1;
 * MPS-style = N over the devices first-fit `Σ (P + E) ≤ C` needs
 * (`mpsGpus`).
 *
 * Never hangs: each run has a deadline (the requests' span twice over, plus
 * warm-up), and a server that exits non-zero, fails on the service or raises a GPU
 * error (ORT does not survive out-of-memory) fails its step at once, its servers
 * stopped (bench/traceRun.ts). A failed step ends the ladder with the message in
 * its row; a failed solo run makes E3 a FAILED row (ours 0) with the message.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { freemem, loadavg } from 'node:os';
import { ROOT, type OutputLine } from '../harness.js';
import { formatBytes as bytesText } from '../../core/platform/size.js';
import { mean, quantile, round } from '../stats.js';
import { runTrace, type TraceEntry } from '../traceRun.js';
import { jobMemoryFigures } from './memory.js';
import { cdfChart, writeFigure } from '../figures.js';
import { times, type BenchResult, type TableRow } from '../report.js';
import type { SummaryRow } from '../summary.js';

/** Devices of capacity C that run every job side by side (MPS-style: each needs P + E of its own), first-fit decreasing. */
export function mpsGpus(jobs: readonly { persistentBytes: number; ephemeralBytes: number }[], capacityBytes: number): number {
  const bins: number[] = [];
  for (const size of jobs.map((j) => j.persistentBytes + j.ephemeralBytes).sort((a, b) => b - a)) {
    const bin = bins.findIndex((used) => used + size <= capacityBytes);
    if (bin >= 0) bins[bin] += size;
    else bins.push(size);
  }
  return bins.length;
}

export interface ZooInferenceOptions {
  /** ort-serve.js sizes, taken in turn by the servers. */
  sizes: string[];
  /** Server counts tried, ascending. */
  counts: number[];
  /** Requests per second per server. */
  ratePerS: number;
  /**
   * How long each server sends requests after its warm-up, s: each gets the requests of its seeded Poisson
   * schedule that arrive within it (`requestsWithin`), so that all stop together instead of the slowest
   * schedule of N setting the step's length.
   */
  durationS: number;
  /** The SLO: p99 ≤ max(sloFloorMs, sloSoloFactor × the solo p99 of the slowest size). */
  sloFloorMs: number;
  sloSoloFactor: number;
  /** The solo reference's rate and requests (at the shared rate it would take minutes; a server alone queues nothing at either). */
  soloRatePerS: number;
  soloRequests: number;
  /** Gap between two servers' releases. */
  staggerMs: number;
  figuresDir: string;
}

/**
 * The paper's load (42 servers, a request every ~10 s each) on the zoo's smallest server: the MLP at
 * batch 1 (a few ms a request alone here), 0.1 req/s each (4.2 req/s for 42), for 120 s each (so that
 * the window with all 42 warm lasts over a minute). The ladder stops at the first count past the SLO.
 */
export const ZOO_INFERENCE_DEFAULTS: ZooInferenceOptions = {
  sizes: ['small'],
  counts: [14, 28, 42],
  ratePerS: 0.1,
  durationS: 120,
  sloFloorMs: 100,
  sloSoloFactor: 3,
  soloRatePerS: 2,
  soloRequests: 20,
  staggerMs: 300,
  figuresDir: join(ROOT, 'docs'),
};

/**
 * Quick: the ladder's last step only, at the same rate, 60 s each: ~2.5 min here (the full ladder took
 * 8 min 45 s at load 3–5: ~1.5 s to start each server, plus each step's requests), inside the quick
 * run's 10 minutes on 2 cores.
 */
export const ZOO_INFERENCE_QUICK: Partial<ZooInferenceOptions> = { counts: [42], durationS: 60 };

/** How long one run may take after its start: the requests' span twice over, plus releases and ORT's warm-ups. */
function deadlineMs(servers: number, staggerMs: number, spanMs: number): number {
  return servers * staggerMs + 2 * spanMs + 90_000 + servers * 2000;
}

/**
 * How many of server `seed`'s requests arrive within `durationMs` of its first: ort-serve.js's own
 * schedule (mulberry32 seeded `seed + 2000`, exponential gaps at `ratePerS`), at least 1.
 */
export async function requestsWithin(seed: number, ratePerS: number, durationMs: number): Promise<number> {
  const { prng } = await import(pathToFileURL(join(ROOT, 'assets', 'jobs', 'ort-models.js')).href) as { prng: (seed: number) => () => number };
  const rand = prng(seed + 2000);
  let t = 0;
  let count = 0;
  while (t <= durationMs) {
    count += 1;
    t += (-Math.log(1 - rand()) / ratePerS) * 1000;
  }
  return Math.max(1, count);
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0];

const ORT_PRELOAD = ['--preload', 'onnxruntime-web/webgpu'];
const FAIR_ONE_LANE = { workConserving: true, holdMs: 0, maxLanes: 1 };

interface Server {
  name: string;
  size: string;
  arrivalMs: number;
  /** Its requests (ort-serve.js --requests). */
  requests: number;
}

function entries(servers: readonly Server[], ratePerS: number): TraceEntry[] {
  return servers.map((server, i) => ({
    name: server.name,
    arrivalMs: server.arrivalMs,
    launch: (startFile) => ({
      file: 'timed.js',
      jobArgs: [...ORT_PRELOAD, '--start-file', startFile, '--arrival-ms', String(server.arrivalMs), join(ROOT, 'assets', 'jobs', 'ort-serve.js'),
        '--size', server.size, '--rate', String(ratePerS), '--requests', String(server.requests), '--seed', String(i + 1)],
      salusArgs: [],
      nodeFlags: ['--liftoff-only'],
    }),
  }));
}

/** A server's requests: when each arrived (epoch ms) and its latency; when it was warm. */
function requestsOf(lines: readonly OutputLine[]) {
  const warmAt = lines.find((line) => line.json?.warmupMs !== undefined)?.json?.t as number | undefined;
  const requests = lines.flatMap((line) => (typeof line.json?.request === 'number'
    ? [{ arrivedAt: (line.json.t as number) - (line.json.latencyMs as number), latencyMs: line.json.latencyMs as number }] : []));
  return { warmAt: warmAt ?? NaN, requests };
}

/** Issue 10's target for E3: jobs on one device within the SLO. */
const ZOO_E3_TARGET = 42;

interface Step {
  count: number;
  capacityBytes: number;
  /** The most the service held (ΣP + Σ lanes) while all were warm and serving: past ORT's warm-ups. */
  heldInWindowBytes: number;
  mpsDevices: number;
  sumPEBytes: number;
  sumPBytes: number;
  maxEBytes: number;
  maxLanes: number;
  windowS: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** p99 over every request after its own server's warm-up (not only the window where all were warm). */
  p99AllWarmMs: number;
  met: boolean;
  latencies: number[];
  /** 1-min load average when the step began and ended; free memory (GiB) when it began. */
  loadAtStart: number;
  loadAtEnd: number;
  freeGiBAtStart: number;
}

const readyLine = (_info: unknown, lines: readonly OutputLine[]) => lines.some((line) => line.json?.ready !== undefined);
const p99 = (values: readonly number[]) => round(quantile(values, 0.99), 1);

export async function benchZooInference(overrides: Partial<ZooInferenceOptions> = {}, log: (line: string) => void = () => {}): Promise<BenchResult> {
  const options: ZooInferenceOptions = { ...ZOO_INFERENCE_DEFAULTS, ...overrides };
  const method = `ort-serve.js servers (${options.sizes.join(', ')} in turn; batch 1) with Poisson requests at ${options.ratePerS} req/s each for ${options.durationS} s after its warm-up, started and ORT loaded before release (bench/traceRun.ts, node --liftoff-only), released ${options.staggerMs} ms apart on one FAIR service with one work-conserving lane; SLO p99 ≤ max(${options.sloFloorMs} ms, ${options.sloSoloFactor} × solo p99), solo = one server alone at ${options.soloRatePerS} req/s; p99 over requests that arrived after all were warm and before the first server's schedule ended; ladder of counts stops at the first past the SLO or failed; C = the most the service held (ΣP + Σ lanes); MPS-style devices by first-fit of each server's P + E (P max(stateBytes, sampled persistent peak), E its ephemeral peak; same run) into C. Each run has a deadline and fails at a server's first error.`;
  const runOptions = (servers: number, spanMs: number) => ({
    serveArgs: ['--memory', '1GiB', '--policy', 'FAIR'], params: FAIR_ONE_LANE, ready: readyLine, failOnGpuErrors: true,
    timeoutMs: deadlineMs(servers, options.staggerMs, spanMs),
  });

  // 1. Each model alone: latency, P and E.
  const solo: Record<string, { latencies: number[]; persistentBytes: number; ephemeralBytes: number }> = {};
  try {
    for (const size of options.sizes) {
      const server: Server = { name: `e3-solo-${size}`, size, arrivalMs: 0, requests: options.soloRequests };
      const result = await runTrace(entries([server], options.soloRatePerS), { ...runOptions(1, (options.soloRequests * 1000) / options.soloRatePerS), sampleEveryMs: 200 });
      const { warmAt, requests } = requestsOf(result.runs[0].lines);
      solo[size] = {
        latencies: requests.filter((r) => r.arrivedAt >= warmAt).map((r) => r.latencyMs),
        persistentBytes: Math.max(...result.samples.map((s) => s.persistentBytes)),
        ephemeralBytes: result.infos[0].memory.ephemeralPeakBytes,
      };
      log(`E3 ${size} alone: p99 ${p99(solo[size].latencies)} ms, P ${bytesText(solo[size].persistentBytes)}, E ${bytesText(solo[size].ephemeralBytes)}`);
    }
  } catch (error) {
    log(`E3 FAILED alone: ${firstLine(error)}`);
    return {
      name: 'E3 inference', method,
      rows: [{ metric: `E3 FAILED (a server alone): ${firstLine(error)}`, salus: '', reference: '', ratio: '', goal: `≥${ZOO_E3_TARGET}`, met: false }],
      summaryRows: [{
        id: 'E3', what: `FAILED (a server alone): ${firstLine(error)}`, ours: 0, baseline: 1, unit: 'jobs/device', ratio: 0, paper: '42 on one GPU (vs 42 GPUs)', target: ZOO_E3_TARGET,
      }],
      data: { options: { ...options, figuresDir: undefined }, failed: error instanceof Error ? error.message : String(error) },
    };
  }

  const soloP99 = Math.max(...options.sizes.map((size) => p99(solo[size].latencies)));
  const sloMs = round(Math.max(options.sloFloorMs, options.sloSoloFactor * soloP99), 1);
  const sloText = `p99 ≤ max(${options.sloFloorMs} ms, ${options.sloSoloFactor} × solo p99 ${soloP99} ms) = ${sloMs} ms`;
  log(`E3 SLO: ${sloText}`);

  // 2. The ladder.
  const steps: Step[] = [];
  const failures: { count: number; error: string }[] = [];
  for (const count of options.counts) {
    const servers: Server[] = [];
    for (let i = 0; i < count; i++) {
      const size = options.sizes[i % options.sizes.length];
      servers.push({
        name: `e3-${count}-${String(i).padStart(2, '0')}-${size}`, size, arrivalMs: i * options.staggerMs,
        requests: await requestsWithin(i + 1, options.ratePerS, options.durationS * 1000),
      });
    }
    // Memory is not capped: ORT's first run asks for more than its steady peak, and a cap
    // sized from the solo peaks made warm-ups fail with out-of-memory. C is measured instead.
    let result;
    const loadAtStart = round(loadavg()[0], 2);
    const freeGiBAtStart = round(freemem() / 2 ** 30, 1);
    try {
      result = await runTrace(entries(servers, options.ratePerS), { ...runOptions(count, options.durationS * 1000), sampleEveryMs: 500 });
    } catch (error) {
      failures.push({ count, error: error instanceof Error ? error.message : String(error) });
      log(`E3 ${count} servers FAILED: ${firstLine(error)}`);
      break;
    }
    const capacityBytes = Math.max(...result.samples.map((s) => s.persistentBytes + s.laneBytes));
    // Each server's P + E as this run saw it: max(its state between requests (stateBytes), its sampled peak persistent bytes) and its ephemeral peak.
    const needs = jobMemoryFigures(result.infos, result.samples).map((figures, i) => ({ ...figures, model: servers[i].size }));
    const mps = mpsGpus(needs, capacityBytes);
    const served = result.runs.map((run) => requestsOf(run.lines));
    const from = Math.max(...served.map((s) => s.warmAt));
    // Until the first server's schedule ended (its warm-up + durationS; its last request may have come
    // earlier, and it was then idle, as a server at this rate mostly is, until it exited).
    const until = Math.min(...served.map((s) => s.warmAt)) + options.durationS * 1000;
    const inWindow = served.flatMap((s) => s.requests.filter((r) => r.arrivedAt >= from && r.arrivedAt <= until).map((r) => r.latencyMs));
    const all = served.flatMap((s) => s.requests.filter((r) => r.arrivedAt >= s.warmAt).map((r) => r.latencyMs));
    const windowSamples = result.samples.filter((sample) => sample.at >= from && sample.at <= until);
    const step: Step = {
      count, capacityBytes, mpsDevices: mps,
      heldInWindowBytes: Math.max(0, ...windowSamples.map((sample) => sample.persistentBytes + sample.laneBytes)),
      sumPEBytes: needs.reduce((sum, n) => sum + n.persistentBytes + n.ephemeralBytes, 0),
      sumPBytes: needs.reduce((sum, n) => sum + n.persistentBytes, 0),
      maxEBytes: Math.max(...needs.map((n) => n.ephemeralBytes)),
      maxLanes: Math.max(0, ...result.samples.map((s) => s.lanes)),
      windowS: round((until - from) / 1000, 1),
      requests: inWindow.length,
      p50Ms: round(quantile(inWindow, 0.5), 1),
      p99Ms: p99(inWindow),
      meanMs: round(mean(inWindow), 1),
      p99AllWarmMs: p99(all),
      met: inWindow.length > 0 && p99(inWindow) <= sloMs,
      latencies: inWindow.map((ms) => round(ms, 1)),
      loadAtStart, loadAtEnd: round(loadavg()[0], 2), freeGiBAtStart,
    };
    steps.push(step);
    log(`E3 ${count} servers in ${bytesText(capacityBytes)} (${bytesText(step.heldInWindowBytes)} while all served; Σ(P+E) ${bytesText(step.sumPEBytes)}: MPS-style ${mps} devices): ${step.requests} requests in ${step.windowS} s together, p99 ${step.p99Ms} ms (p50 ${step.p50Ms} ms) ${step.met ? 'within' : 'past'} the ${sloMs} ms SLO; load ${step.loadAtStart} → ${step.loadAtEnd}, ${step.freeGiBAtStart} GiB free at the start`);
    if (!step.met) break;
  }

  const best = [...steps].reverse().find((s) => s.met) ?? null;
  const jobsPerDevice = best?.count ?? 0;
  const mpsPerDevice = best ? round(best.count / best.mpsDevices, 2) : 0;
  const failure = failures[0];
  const missed = steps.find((s) => !s.met);
  const why = failure ? `; ${failure.count} servers FAILED: ${firstLine(failure.error)}` : missed ? `; ${missed.count} servers: p99 ${missed.p99Ms} ms` : '';
  const summaryRows: SummaryRow[] = [
    {
      id: 'E3', what: `ORT-web inference servers (${options.sizes.join(', ')}; batch 1; ${options.ratePerS} req/s each; ladder ${options.counts.join(', ')}) on one device with ${sloText}: ours / one job per device${best ? ` (${best.count} servers: p99 ${best.p99Ms} ms over ${best.requests} requests in ${best.windowS} s with all warm)` : ''}${why}`,
      ours: jobsPerDevice, baseline: 1, unit: 'jobs/device', ratio: jobsPerDevice, paper: '42 on one GPU (vs 42 GPUs)', target: ZOO_E3_TARGET,
    },
    ...(best ? [{
      id: 'E3.mps', what: `the same ${best.count} servers: ours / MPS-style Σ(P+E) ≤ C (${best.mpsDevices} device(s) of C = ${bytesText(best.capacityBytes)}, the most the service held, warm-ups included; Σ(P+E) ${bytesText(best.sumPEBytes)} = ΣP ${bytesText(best.sumPBytes)} + ΣE, vs ${bytesText(best.heldInWindowBytes)} held while all served)`,
      ours: jobsPerDevice, baseline: mpsPerDevice, unit: 'jobs/device', ratio: round(jobsPerDevice / mpsPerDevice, 2), paper: '7× (1 GPU vs MPS 6)',
    }] : []),
  ];
  const rows: TableRow[] = steps.map((step) => ({
    metric: `E3 ${step.count} ORT servers on one lane, p99 (SLO ${sloMs} ms)`, salus: `${step.p99Ms} ms`, reference: '', ratio: `MPS-style: ${step.mpsDevices} device(s)`,
    goal: `≤${sloMs} ms`, met: step.met,
  }));
  rows.push(...failures.map((f) => ({ metric: `E3 ${f.count} ORT servers FAILED: ${firstLine(f.error)}`, salus: '', reference: '', ratio: '', goal: `≤${sloMs} ms`, met: false })));
  rows.push(...options.sizes.map((size) => ({ metric: `E3 ${size} server alone, p99`, salus: `${p99(solo[size].latencies)} ms`, reference: '', ratio: '', goal: '', met: null })));
  if (best) rows.push({ metric: 'E3 jobs per device: ours / MPS-style', salus: String(jobsPerDevice), reference: String(mpsPerDevice), ratio: times(jobsPerDevice / mpsPerDevice), goal: '', met: null });

  const last = steps[steps.length - 1];
  writeFigure(join(options.figuresDir, 'e3-latency-cdf.svg'), cdfChart({
    title: 'E3: ORT-web request latency, sharing one lane vs alone', xLabel: 'latency, arrival to answer (ms)', yLabel: 'fraction of requests',
    series: [
      ...steps.map((step) => ({ label: `${step.count} servers (p99 ${step.p99Ms})`, values: step.latencies })),
      ...options.sizes.map((size) => ({ label: `${size} alone (p99 ${p99(solo[size].latencies)})`, values: solo[size].latencies })),
    ],
    marker: { x: sloMs, label: `SLO ${sloMs} ms` },
  }));

  return {
    name: 'E3 inference',
    method,
    rows,
    summaryRows,
    data: { options: { ...options, figuresDir: undefined }, sloMs, soloP99Ms: soloP99, solo, steps, failures, lastWindowRequests: last?.requests ?? 0 },
  };
}
