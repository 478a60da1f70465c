/**
 * E3 (issue 10; paper: 42 inference jobs — 14 models × 3, batch 1, a request
 * every ~10 s — on one GPU with Salus, where MPS needs 6 and no sharing 42) on
 * the zoo's ONNX Runtime Web servers (assets/jobs/ort-serve.js: the MLP and the
 * conv net at batch 1, alternating), answering Poisson requests at a low rate.
 *
 * 1. Each model alone on a fresh service: its latency, and its persistent (P,
 *    the peak the memory map showed) and ephemeral (E, the service's peak) bytes.
 * 2. For each count N of the ladder, N servers on one fresh `salus serve --policy
 *    FAIR` set to one work-conserving lane; C = the most the service held for them
 *    (Σ P + Σ lanes, sampled). (A cap sized from the solo peaks failed ORT's
 *    first run, which asks for more than its steady peak, with out-of-memory.)
 *    Each server's MPS-style need is its own P + E in that same run (its sampled
 *    peak persistent bytes, its ephemeral peak), so both sides count the same
 *    allocations. All
 *    are started and ORT loaded first (bench/traceRun.ts), then released 300 ms
 *    apart; a request counts when it arrived while every server was warm and
 *    still serving. N meets the SLO when the p99 of those requests' latency
 *    (arrival to answer read back) is within `sloMs`; the ladder stops at the
 *    first N that misses.
 * Jobs per device: ours = the largest N that met the SLO; one job per device = 1;
 * MPS-style = N over the devices first-fit `Σ (P + E) ≤ C` needs
 * (bench/paper/inference.ts's `mpsGpus`).
 *
 * Never hangs: each run has a deadline (the requests' span twice over, plus
 * warm-up), and a server that exits non-zero, fails on the service or raises a GPU
 * error (ORT does not survive out-of-memory) fails its step at once, its servers
 * stopped (bench/traceRun.ts). A failed step ends the ladder with the message in
 * its row; a failed solo run makes E3 a FAILED row (ours 0) with the message.
 */
import { join } from 'node:path';
import { ROOT, type OutputLine } from '../harness.js';
import { bytesText, mean, quantile, round, times } from '../paper/common.js';
import { mpsGpus } from '../paper/inference.js';
import { runTrace, type TraceEntry } from '../traceRun.js';
import { cdfChart, writeFigure } from '../figures.js';
import type { BenchResult, TableRow } from '../report.js';
import type { SummaryRow } from '../summary.js';

export interface ZooInferenceOptions {
  /** ort-serve.js sizes, taken in turn by the servers. */
  sizes: string[];
  /** Server counts tried, ascending. */
  counts: number[];
  /** Requests per second per server. */
  ratePerS: number;
  /** Requests per server. */
  requests: number;
  sloMs: number;
  /** Gap between two servers' releases. */
  staggerMs: number;
  figuresDir: string;
}

export const ZOO_INFERENCE_DEFAULTS: ZooInferenceOptions = {
  sizes: ['small', 'medium'],
  counts: [21, 42],
  ratePerS: 0.5,
  requests: 40,
  sloMs: 100,
  staggerMs: 300,
  figuresDir: join(ROOT, 'docs'),
};

/** Quick: 12 servers; 30 requests at 1/s each, so that ~20 s of requests fall while all 12 are warm. */
export const ZOO_INFERENCE_QUICK: Partial<ZooInferenceOptions> = { counts: [12], ratePerS: 1, requests: 30 };

/** How long one run may take after its start: the requests' span twice over, plus releases and ORT's warm-ups. */
function deadlineMs(options: ZooInferenceOptions, servers: number): number {
  return servers * options.staggerMs + (2 * options.requests * 1000) / options.ratePerS + 90_000;
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0];

const ORT_PRELOAD = ['--preload', 'onnxruntime-web/webgpu'];
const FAIR_ONE_LANE = { workConserving: true, holdMs: 0, maxLanes: 1 };

interface Server {
  name: string;
  size: string;
  arrivalMs: number;
}

function entries(servers: readonly Server[], options: ZooInferenceOptions): TraceEntry[] {
  return servers.map((server, i) => ({
    name: server.name,
    arrivalMs: server.arrivalMs,
    launch: (startFile) => ({
      file: 'timed.js',
      jobArgs: [...ORT_PRELOAD, '--start-file', startFile, '--arrival-ms', String(server.arrivalMs), join(ROOT, 'assets', 'jobs', 'ort-serve.js'),
        '--size', server.size, '--rate', String(options.ratePerS), '--requests', String(options.requests), '--seed', String(i + 1)],
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
}

const readyLine = (_info: unknown, lines: readonly OutputLine[]) => lines.some((line) => line.json?.ready !== undefined);
const p99 = (values: readonly number[]) => round(quantile(values, 0.99), 1);

export async function benchZooInference(overrides: Partial<ZooInferenceOptions> = {}, log: (line: string) => void = () => {}): Promise<BenchResult> {
  const options: ZooInferenceOptions = { ...ZOO_INFERENCE_DEFAULTS, ...overrides };
  const method = 'ort-serve.js servers (sizes in turn) with Poisson requests at a low rate, started and ORT loaded before release (bench/traceRun.ts), released 300 ms apart on one FAIR service with one work-conserving lane; C = the most the service held (ΣP + Σ lanes); p99 over requests that arrived while all were warm and serving; ladder of counts stops at the first past the SLO or failed; MPS-style devices by first-fit of each server\'s P + E (same run) into C. Each run has a deadline and fails at a server\'s first error.';
  const runOptions = (servers: number) => ({
    serveArgs: ['--memory', '1GiB', '--policy', 'FAIR'], params: FAIR_ONE_LANE, ready: readyLine, failOnGpuErrors: true, timeoutMs: deadlineMs(options, servers),
  });

  // 1. Each model alone: latency, P and E.
  const solo: Record<string, { latencies: number[]; persistentBytes: number; ephemeralBytes: number }> = {};
  try {
    for (const size of options.sizes) {
      const server: Server = { name: `e3-solo-${size}`, size, arrivalMs: 0 };
      const result = await runTrace(entries([server], options), { ...runOptions(1), sampleEveryMs: 200 });
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

  // 2. The ladder.
  const steps: Step[] = [];
  const failures: { count: number; error: string }[] = [];
  for (const count of options.counts) {
    const servers: Server[] = Array.from({ length: count }, (_, i) => {
      const size = options.sizes[i % options.sizes.length];
      return { name: `e3-${count}-${String(i).padStart(2, '0')}-${size}`, size, arrivalMs: i * options.staggerMs };
    });
    // Memory is not capped: ORT's first run asks for more than its steady peak, and a cap
    // sized from the solo peaks made warm-ups fail with out-of-memory. C is measured instead.
    let result;
    try {
      result = await runTrace(entries(servers, options), { ...runOptions(count), sampleEveryMs: 500 });
    } catch (error) {
      failures.push({ count, error: error instanceof Error ? error.message : String(error) });
      log(`E3 ${count} servers FAILED: ${firstLine(error)}`);
      break;
    }
    const capacityBytes = Math.max(...result.samples.map((s) => s.persistentBytes + s.laneBytes));
    // Each server's P + E as this run saw it: its peak persistent bytes (sampled) and its ephemeral peak.
    const needs = servers.map((server, i) => {
      const persistentBytes = Math.max(0, ...result.samples.flatMap((s) => s.jobs?.filter((j) => j.name === server.name).map((j) => j.persistentBytes) ?? []));
      return { name: server.name, model: server.size, persistentBytes, ephemeralBytes: result.infos[i].memory.ephemeralPeakBytes };
    });
    const mps = mpsGpus(needs, capacityBytes);
    const served = result.runs.map((run) => requestsOf(run.lines));
    const from = Math.max(...served.map((s) => s.warmAt));
    const until = Math.min(...served.map((s) => s.requests[s.requests.length - 1]?.arrivedAt ?? -Infinity));
    const inWindow = served.flatMap((s) => s.requests.filter((r) => r.arrivedAt >= from && r.arrivedAt <= until).map((r) => r.latencyMs));
    const all = served.flatMap((s) => s.requests.filter((r) => r.arrivedAt >= s.warmAt).map((r) => r.latencyMs));
    const step: Step = {
      count, capacityBytes, mpsDevices: mps,
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
      met: inWindow.length > 0 && p99(inWindow) <= options.sloMs,
      latencies: inWindow.map((ms) => round(ms, 1)),
    };
    steps.push(step);
    log(`E3 ${count} servers in ${bytesText(capacityBytes)} (Σ(P+E) ${bytesText(step.sumPEBytes)}: MPS-style ${mps} devices): ${step.requests} requests in ${step.windowS} s together, p99 ${step.p99Ms} ms ${step.met ? 'within' : 'past'} the ${options.sloMs} ms SLO`);
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
      id: 'E3', what: `ORT-web inference servers (MLP, conv net; batch 1; ${options.ratePerS} req/s each) on one device with p99 ≤ ${options.sloMs} ms: ours / one job per device${best ? ` (p99 ${best.p99Ms} ms)` : ''}${why}`,
      ours: jobsPerDevice, baseline: 1, unit: 'jobs/device', ratio: jobsPerDevice, paper: '42 on one GPU (vs 42 GPUs)', target: ZOO_E3_TARGET,
    },
    ...(best ? [{
      id: 'E3.mps', what: `the same ${best.count} servers: ours / MPS-style Σ(P+E) ≤ C (${best.mpsDevices} device(s) of C = ${bytesText(best.capacityBytes)} for Σ(P+E) ${bytesText(best.sumPEBytes)})`,
      ours: jobsPerDevice, baseline: mpsPerDevice, unit: 'jobs/device', ratio: round(jobsPerDevice / mpsPerDevice, 2), paper: '7× (1 GPU vs MPS 6)',
    }] : []),
  ];
  const rows: TableRow[] = steps.map((step) => ({
    metric: `E3 ${step.count} ORT servers on one lane, p99 (SLO ${options.sloMs} ms)`, salus: `${step.p99Ms} ms`, reference: '', ratio: `MPS-style: ${step.mpsDevices} device(s)`,
    goal: `≤${options.sloMs} ms`, met: step.met,
  }));
  rows.push(...failures.map((f) => ({ metric: `E3 ${f.count} ORT servers FAILED: ${firstLine(f.error)}`, salus: '', reference: '', ratio: '', goal: `≤${options.sloMs} ms`, met: false })));
  rows.push(...options.sizes.map((size) => ({ metric: `E3 ${size} server alone, p99`, salus: `${p99(solo[size].latencies)} ms`, reference: '', ratio: '', goal: '', met: null })));
  if (best) rows.push({ metric: 'E3 jobs per device: ours / MPS-style', salus: String(jobsPerDevice), reference: String(mpsPerDevice), ratio: times(jobsPerDevice / mpsPerDevice), goal: '', met: null });

  const last = steps[steps.length - 1];
  writeFigure(join(options.figuresDir, 'e3-latency-cdf.svg'), cdfChart({
    title: 'E3: ORT-web request latency, sharing one lane vs alone', xLabel: 'latency, arrival to answer (ms)', yLabel: 'fraction of requests',
    series: [
      ...steps.map((step) => ({ label: `${step.count} servers (p99 ${step.p99Ms})`, values: step.latencies })),
      ...options.sizes.map((size) => ({ label: `${size} alone (p99 ${p99(solo[size].latencies)})`, values: solo[size].latencies })),
    ],
    marker: { x: options.sloMs, label: `SLO ${options.sloMs} ms` },
  }));

  return {
    name: 'E3 inference',
    method,
    rows,
    summaryRows,
    data: { options: { ...options, figuresDir: undefined }, solo, steps, failures, lastWindowRequests: last?.requests ?? 0 },
  };
}
