/**
 * `--only wire` (issue 19): what the wire between a job and the service costs,
 * against a local device (and, for the round trip, a raw socket), each side
 * measured alternately in one run on one warmed `salus serve`. Rows W1–W5 of
 * bench/results/summary.json:
 *
 * - W1 CPU per cheap command: bench/jobs/call-path.js's cheap batches (passes of
 *   setPipeline, setBindGroup, dispatchWorkgroups(0)); through the service the
 *   job's process CPU plus the service's (/proc/PID/stat, read by the job around
 *   its timed batches), locally the job's. Target: service ≤ 1.5× local.
 * - W2 wall per small dispatch: call-path.js's submits of `dispatches`
 *   dispatchWorkgroups(1) of a one-line kernel, at the lower quartile of the
 *   per-submit times: a software GPU's threads wait for the shared cores, and
 *   a neighbour's load makes submits several times slower at random, on
 *   either side (the median swings with it). Target ≤ 1.1×.
 * - W3 an idle awaited call (`onSubmittedWorkDone`, nothing submitted) against
 *   a raw Node↔Node Unix-socket ping-pong (bench/jobs/socket-ping.js) whose two
 *   processes stay awake after each write as the service and a quick job do
 *   (core/platform/quickTurns.ts; the pair that sleeps between messages, and pays
 *   a wake-up each way, is measured and reported beside it), medians
 *   over each process's warm calls (after its first `coldPings`: a job awaits
 *   thousands of times, and its first calls run code V8 has not compiled yet).
 *   Target: the service adds ≤ 15 µs. W3.cold: the same over each process's
 *   first `coldPings` calls (the 10th on), all three sides alike, measured.
 * - W4 a `uploadMib` MiB writeBuffer (upload.js) in fresh jobs, every repetition
 *   counted, the first of each job also alone (W4.first). Target ≥ 0.4× local.
 *   W4.read: the same buffer read back whole (copy, mapAsync, getMappedRange),
 *   `uploadReadbacks` times per job; the same target.
 * - W5.N commands per second the service replays with N jobs sending cheap
 *   batches at once (started together by bench/traceRun.ts's start file, each in
 *   a lane of its own under PACK; counted over the window in which all N were
 *   timing), beside one local job's rate.
 *
 * W1–W3 come from the same call-path processes: per round one through the
 * service, one local, one raw ping-pong, in ABBA order. The service is warmed
 * first by one untimed job (a fresh service's replay path runs its first ~100k
 * commands several times slower while V8 settles). Everything goes through
 * `salus serve`, `salus run` and `salus run --local`, so the bench measures any
 * wire behind the same CLI.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callPathSamples, pingSamples } from './callPath.js';
import { expectSuccess, JOBS_DIR, startNode, startService, type BenchService, type SalusRun } from './harness.js';
import { type BenchResult, type TableRow } from './report.js';
import { quantile, round, rounded, summarize } from './stats.js';
import type { SummaryRow } from './summary.js';
import { runTrace, type TraceEntry } from './traceRun.js';
import { mibPerSecond, uploadTimes } from './uploadThroughput.js';
import { QUICK_TURN_WINDOW_US } from '../core/platform/quickTurns.js';

export interface WireOptions {
  /** Rounds of W1–W3: one service job, one local job, one raw ping-pong each. */
  rounds: number;
  /**
   * Awaited empty calls (and raw round trips) per process. The first `coldPings` of each process are its cold
   * calls (W3.cold: the 10th to the last of them), the rest its warm ones (W3).
   */
  pings: number;
  coldPings: number;
  /** Small dispatches per submit (W2), and submits per process (the first left out). */
  dispatches: number;
  submits: number;
  /** Timed cheap batches of 3,000 commands per process (W1). */
  cheapBatches: number;
  /** Cheap batches of the untimed job that warms the service first. */
  warmupBatches: number;
  /** W4: upload size, fresh jobs per side, uploads per job (all counted), whole readbacks per job (W4.read). */
  uploadMib: number;
  uploadRounds: number;
  uploadRepeats: number;
  uploadReadbacks: number;
  /** W5: how many jobs at once, one row each, and how long each sends. */
  ceilingJobs: number[];
  ceilingSeconds: number;
}

export const WIRE_DEFAULTS: WireOptions = {
  rounds: 4, pings: 2000, coldPings: 100, dispatches: 500, submits: 21, cheapBatches: 150, warmupBatches: 50,
  uploadMib: 256, uploadRounds: 3, uploadRepeats: 3, uploadReadbacks: 2, ceilingJobs: [1, 2, 4, 8], ceilingSeconds: 4,
};

/** Under a minute on 2 busy cores. */
export const WIRE_QUICK: WireOptions = {
  rounds: 2, pings: 1000, coldPings: 100, dispatches: 500, submits: 9, cheapBatches: 30, warmupBatches: 20,
  uploadMib: 256, uploadRounds: 1, uploadRepeats: 2, uploadReadbacks: 2, ceilingJobs: [1, 2, 4, 8], ceilingSeconds: 1.5,
};

/** The issue's targets, each as its own statement and as the summary's `ratio ≥ target`. */
const TARGETS = {
  cpuPerCommand: { atMost: 1.5, paper: 'issue 19: job + service CPU ≤ 1.5× local' },
  smallDispatch: { atMost: 1.1, paper: 'issue 19: ≤ 1.1× local' },
  idleCallAddedUs: { atMost: 15, paper: 'issue 19: ≤ raw socket round trip + 15 µs' },
  upload: { atLeast: 0.4, paper: 'issue 19: ≥ 0.4× local, every repetition (aim 0.5×)' },
  ceiling: { paper: 'issue 19: measured with 1, 2, 4, 8 jobs' },
};

/** The `cheap` line of call-path.js. */
export interface CheapEvent {
  commands: number;
  perBatch: number;
  cpuMs: number;
  serviceCpuMs: number | null;
  wallMs: number;
  start: number;
  ends: number[];
}

function cheapOf(run: SalusRun): CheapEvent {
  const [cheap] = run.events('cheap');
  if (!cheap || !(cheap.commands > 0)) throw new Error('bench: call-path job printed no cheap batches');
  return cheap as unknown as CheapEvent;
}

/** One side's W1–W3 samples over all its processes. */
interface SideSamples {
  /** Round trips after each process's first `coldPings` (W3), and its cold ones before (W3.cold). */
  pingMs: number[];
  coldPingMs: number[];
  dispatchMs: number[];
  /** Per process: CPU µs per cheap command (job + service through it), and the parts. */
  cpuUsPerCommand: number[];
  jobCpuUsPerCommand: number[];
  serviceCpuUsPerCommand: number[];
  /** Per process: cheap commands per wall second. */
  commandsPerSecond: number[];
}

const emptySide = (): SideSamples => ({ pingMs: [], coldPingMs: [], dispatchMs: [], cpuUsPerCommand: [], jobCpuUsPerCommand: [], serviceCpuUsPerCommand: [], commandsPerSecond: [] });

/**
 * Splits one process's round trips (its first 10 already left out by pingSamples) at `coldPings`: the cold
 * calls before, the warm ones after.
 */
function splitPings(pingMs: readonly number[], coldPings: number): { cold: number[]; warm: number[] } {
  const at = Math.max(0, coldPings - 10);
  return { cold: pingMs.slice(0, at), warm: pingMs.slice(at) };
}

function addCallPath(side: SideSamples, coldPings: number, run: SalusRun): void {
  const { pingMs, dispatchMs } = callPathSamples(run);
  const { cold, warm } = splitPings(pingMs, coldPings);
  side.pingMs.push(...warm);
  side.coldPingMs.push(...cold);
  side.dispatchMs.push(...dispatchMs);
  const cheap = cheapOf(run);
  const serviceMs = cheap.serviceCpuMs ?? 0;
  side.jobCpuUsPerCommand.push((cheap.cpuMs * 1000) / cheap.commands);
  side.serviceCpuUsPerCommand.push((serviceMs * 1000) / cheap.commands);
  side.cpuUsPerCommand.push(((cheap.cpuMs + serviceMs) * 1000) / cheap.commands);
  side.commandsPerSecond.push(cheap.commands / (cheap.wallMs / 1000));
}

/**
 * A raw Node↔Node Unix-socket ping-pong: an echo process and a pinging one; the round trips in ms. With
 * `awakeUs`, both stay awake that long after each write, as the service and a quick job do.
 */
async function rawRoundTrips(pings: number, awakeUs = 0): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'salus-wire-'));
  const path = join(dir, 'echo.sock');
  const script = join(JOBS_DIR, 'socket-ping.js');
  const awake = ['--awake-us', String(awakeUs)];
  const echo = startNode(script, ['echo', path, ...awake], process.env);
  try {
    const deadline = Date.now() + 30_000;
    while (!echo.lines.some((line) => line.json?.ev === 'listening')) {
      if (echo.exited() || Date.now() > deadline) throw new Error(`bench: socket-ping echo did not listen on ${path}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ping = expectSuccess(await startNode(script, ['ping', path, '--pings', String(pings), ...awake], process.env).done, 'socket-ping');
    return pingSamples(ping);
  } finally {
    echo.kill();
    await echo.done.catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** W1–W3: `rounds` of (service job, local job, raw ping-pong sleeping and awake), ABBA. */
async function measureCallPath(service: BenchService, options: WireOptions) {
  const args = ['--pings', String(options.pings), '--dispatches', String(options.dispatches), '--submits', String(options.submits),
    '--cheap-batches', String(options.cheapBatches)];
  const salus = emptySide();
  const local = emptySide();
  const raw = { pingMs: [] as number[], coldPingMs: [] as number[] };
  const rawAwake = { pingMs: [] as number[], coldPingMs: [] as number[] };
  for (let k = 0; k < options.rounds; k++) {
    const sides = ['salus', 'local', 'raw', 'rawAwake'] as const;
    for (const side of k % 2 === 0 ? sides : [...sides].reverse()) {
      if (side === 'salus') {
        addCallPath(salus, options.coldPings, expectSuccess(await service.run('call-path.js', [...args, '--service-pid', String(service.pid)], ['--name', `wire-${k}`]).done, 'call-path via salus'));
      } else if (side === 'local') {
        addCallPath(local, options.coldPings, expectSuccess(await service.runLocal('call-path.js', args).done, 'call-path --local'));
      } else {
        const into = side === 'raw' ? raw : rawAwake;
        const { cold, warm } = splitPings(await rawRoundTrips(options.pings, side === 'raw' ? 0 : QUICK_TURN_WINDOW_US), options.coldPings);
        into.pingMs.push(...warm);
        into.coldPingMs.push(...cold);
      }
    }
  }
  return { salus, local, raw, rawAwake };
}

/** W4: fresh upload jobs, alternating; every repetition's ms, each job's first, and every whole readback's. */
async function measureUpload(service: BenchService, options: WireOptions) {
  const args = ['--mib', String(options.uploadMib), '--repeats', String(options.uploadRepeats), '--readbacks', String(options.uploadReadbacks)];
  const side = () => ({ ms: [] as number[], firstMs: [] as number[], readMs: [] as number[] });
  const sides = { salus: side(), local: side() };
  for (let k = 0; k < options.uploadRounds; k++) {
    for (const side of k % 2 === 0 ? ['salus', 'local'] as const : ['local', 'salus'] as const) {
      const run = side === 'salus'
        ? expectSuccess(await service.run('upload.js', args, ['--name', `wire-upload-${k}`]).done, 'upload via salus')
        : expectSuccess(await service.runLocal('upload.js', args).done, 'upload --local');
      const { ms } = uploadTimes(run, 0);
      sides[side].ms.push(...ms);
      sides[side].firstMs.push(ms[0]);
      sides[side].readMs.push(...run.events('readback').map((e) => e.ms as number));
    }
  }
  return sides;
}

/** W5: `jobs` cheap-command jobs through `service` at once; commands replayed per second while all were timing. */
async function measureCeiling(service: BenchService, jobs: number, options: WireOptions) {
  const trace: TraceEntry[] = Array.from({ length: jobs }, (_, i) => ({
    name: `wire-ceiling-${jobs}-${i}`,
    arrivalMs: 0,
    launch: (startFile) => ({
      file: 'timed.js',
      jobArgs: ['--start-file', startFile, '--arrival-ms', '0', join('bench', 'jobs', 'call-path.js'),
        '--pings', '0', '--submits', '0', '--cheap-warmup', '3', '--cheap-seconds', String(options.ceilingSeconds)],
      salusArgs: [],
    }),
  }));
  const result = await runTrace(trace, { serveArgs: [], service, sampleEveryMs: 60_000, timeoutMs: 120_000 + options.ceilingSeconds * 1000 });
  const cheap = result.runs.map(cheapOf);
  const rate = commandsWhileAllSent(cheap);
  if (!rate) {
    const spans = cheap.map((e) => `${Math.round(e.start - result.t0)}–${Math.round(e.ends.at(-1)! - result.t0)} ms`).join(', ');
    throw new Error(`bench: the ${jobs} ceiling jobs never sent at the same time (timed batches after the start: ${spans})`);
  }
  return { jobs, ...rate, startSpreadMs: Math.max(...cheap.map((e) => e.start)) - Math.min(...cheap.map((e) => e.start)) };
}

/**
 * Commands per second over the window in which every job was timing its cheap batches (from the last
 * job's start to the first job's last batch): the batches that ended inside it, each counted whole.
 * Null when the jobs never all sent at once.
 */
export function commandsWhileAllSent(jobs: readonly Pick<CheapEvent, 'perBatch' | 'start' | 'ends'>[]): { windowMs: number; commands: number; commandsPerSecond: number } | null {
  if (!jobs.length || jobs.some((e) => !e.ends.length)) return null;
  const from = Math.max(...jobs.map((e) => e.start));
  const to = Math.min(...jobs.map((e) => e.ends.at(-1)!));
  if (!(to > from)) return null;
  const commands = jobs.reduce((sum, e) => sum + e.perBatch * e.ends.filter((t) => t > from && t <= to).length, 0);
  return { windowMs: to - from, commands, commandsPerSecond: commands / ((to - from) / 1000) };
}

/** Where W2 reads the per-submit times (see the top of this file for why not the median). */
const W2_QUANTILE = 0.25;

/** The policy the ceiling runs under. */
const CEILING_POLICY = 'PACK';

const median = (values: readonly number[]) => quantile(values, 0.5);
/** Round-trip summaries in µs for the result's data. */
const roundTrips = (salusMs: readonly number[], rawMs: readonly number[], rawSleepingMs: readonly number[], localMs: readonly number[], addedUs: number) => ({
  salus: rounded(summarize(salusMs.map((v) => v * 1000))), raw: rounded(summarize(rawMs.map((v) => v * 1000))),
  rawSleeping: rounded(summarize(rawSleepingMs.map((v) => v * 1000))),
  local: rounded(summarize(localMs.map((v) => v * 1000))), addedUs: round(addedUs, 1),
});

/**
 * W2's diagnosis: the GPU's own time per submit of small dispatches on each side (call-path.js
 * `--gpu-times`: timestamps around every submit), in one instrumented process per side after the timed
 * ones, the first submit left out; median µs, or null where none was read. A service side whose wall is
 * longer by about its GPU time's excess ran the same work more slowly on the GPU (on SwiftShader,
 * whose threads hand every dispatch between cores); equal GPU times put the difference on the path.
 */
async function measureGpuPerSubmit(service: BenchService, options: WireOptions): Promise<{ salus: number | null; local: number | null }> {
  const args = ['--pings', '0', '--dispatches', String(options.dispatches), '--submits', String(options.submits), '--gpu-times', '1'];
  const gpuUs = (run: SalusRun): number | null => {
    const us = (run.events('gpu')[0]?.us as number[] | undefined)?.slice(1) ?? [];
    return us.length > 0 ? median(us) : null;
  };
  const salus = expectSuccess(await service.run('call-path.js', args, ['--name', 'wire-gpu-times']).done, 'call-path via salus, --gpu-times');
  const local = expectSuccess(await service.runLocal('call-path.js', args).done, 'call-path --local --gpu-times');
  return { salus: gpuUs(salus), local: gpuUs(local) };
}

const times = (value: number) => `${value.toFixed(2)}x`;
const us = (value: number) => `${value.toFixed(value >= 100 ? 0 : 1)} µs`;

/** Runs W1–W5 on one warmed service; table rows and summary rows with the issue's targets. */
export async function benchWire(options: WireOptions = WIRE_DEFAULTS): Promise<BenchResult> {
  const service = await startService();
  try {
    const warmup = expectSuccess(await service.run('call-path.js', ['--pings', '50', '--dispatches', '100', '--submits', '2',
      '--cheap-batches', String(options.warmupBatches), '--service-pid', String(service.pid)], ['--name', 'wire-warmup']).done, 'wire warm-up via salus');
    const warm = cheapOf(warmup);
    const { salus, local, raw, rawAwake } = await measureCallPath(service, options);
    const upload = await measureUpload(service, options);
    // A diagnosis beside W2; its failure costs the rows nothing.
    const gpuPerSubmit = await measureGpuPerSubmit(service, options).catch(() => ({ salus: null, local: null }));
    // PACK gives each job a lane of its own, so all N send at once (under FIFO the oldest job
    // holds the one lane while it has work, and the others wait for it to end).
    await service.call('setPolicy', CEILING_POLICY);
    const ceiling = [];
    for (const jobs of options.ceilingJobs) ceiling.push(await measureCeiling(service, jobs, options));

    const cpu = { salus: median(salus.cpuUsPerCommand), local: median(local.cpuUsPerCommand) };
    const cpuParts = { job: median(salus.jobCpuUsPerCommand), service: median(salus.serviceCpuUsPerCommand) };
    const dispatchUs = { salus: quantile(salus.dispatchMs, W2_QUANTILE) * 1000, local: quantile(local.dispatchMs, W2_QUANTILE) * 1000 };
    // The floor is the raw pair that stays awake as the service and its job do; the sleeping pair is reported beside it.
    const rttUs = {
      salus: median(salus.pingMs) * 1000, raw: median(rawAwake.pingMs) * 1000, rawSleeping: median(raw.pingMs) * 1000, local: median(local.pingMs) * 1000,
    };
    const addedUs = rttUs.salus - rttUs.raw;
    const coldRttUs = {
      salus: median(salus.coldPingMs) * 1000, raw: median(rawAwake.coldPingMs) * 1000, rawSleeping: median(raw.coldPingMs) * 1000, local: median(local.coldPingMs) * 1000,
    };
    const coldAddedUs = coldRttUs.salus - coldRttUs.raw;
    const bytes = options.uploadMib * 1024 * 1024;
    const rate = (ms: readonly number[]) => mibPerSecond(bytes, median(ms));
    const uploadRate = {
      salus: rate(upload.salus.ms), local: rate(upload.local.ms), salusFirst: rate(upload.salus.firstMs), localFirst: rate(upload.local.firstMs),
      salusRead: rate(upload.salus.readMs), localRead: rate(upload.local.readMs),
    };
    const localCommandsPerSecond = median(local.commandsPerSecond);

    const summaryRows: SummaryRow[] = [
      {
        id: 'W1', unit: 'µs/command', ours: round(cpu.salus), baseline: round(cpu.local), ratio: round(cpu.local / cpu.salus),
        target: round(1 / TARGETS.cpuPerCommand.atMost), paper: TARGETS.cpuPerCommand.paper,
        what: `CPU per cheap command (setPipeline, setBindGroup, dispatchWorkgroups(0)): job + service (${cpuParts.job.toFixed(2)} + ${cpuParts.service.toFixed(2)} µs) vs a local device's job, local / service; service = ${times(cpu.salus / cpu.local)} local`,
      },
      {
        id: 'W2', unit: 'µs', ours: round(dispatchUs.salus), baseline: round(dispatchUs.local), ratio: round(dispatchUs.local / dispatchUs.salus),
        target: round(1 / TARGETS.smallDispatch.atMost), paper: TARGETS.smallDispatch.paper,
        what: `wall per small dispatch (dispatchWorkgroups(1) of a one-line kernel, ${options.dispatches} per submit; lower quartile of submits), local / service; service = ${times(dispatchUs.salus / dispatchUs.local)} local${gpuPerSubmit.salus !== null && gpuPerSubmit.local !== null ? `; GPU time per submit (timestamps around it, a separate run each, median) ${(gpuPerSubmit.local / 1000).toFixed(2)} ms local, ${(gpuPerSubmit.salus / 1000).toFixed(2)} ms through the service` : ''}`,
      },
      {
        id: 'W3', unit: 'µs', ours: round(rttUs.salus, 1), baseline: round(rttUs.raw, 1), ratio: round(rttUs.raw / rttUs.salus),
        // raw / service ≥ raw / (raw + 15 µs) exactly when the service adds at most 15 µs.
        target: round(rttUs.raw / (rttUs.raw + TARGETS.idleCallAddedUs.atMost)), paper: TARGETS.idleCallAddedUs.paper,
        what: `idle awaited call (onSubmittedWorkDone, nothing submitted), warm (after each process's first ${options.coldPings}), vs a raw Node↔Node Unix-socket round trip whose two processes stay awake ${QUICK_TURN_WINDOW_US} µs after each write as the service and its job do (median; ${rttUs.rawSleeping.toFixed(1)} µs when both sleep between messages), raw / service; the service adds ${addedUs.toFixed(1)} µs (a local device's call: ${rttUs.local.toFixed(1)} µs)`,
      },
      {
        id: 'W3.cold', unit: 'µs', ours: round(coldRttUs.salus, 1), baseline: round(coldRttUs.raw, 1), ratio: round(coldRttUs.raw / coldRttUs.salus),
        paper: TARGETS.idleCallAddedUs.paper,
        what: `the same, over each fresh process's calls 10 to ${options.coldPings} (code not yet compiled, on every side), raw (awake) / service; the service adds ${coldAddedUs.toFixed(1)} µs (raw sleeping ${coldRttUs.rawSleeping.toFixed(1)} µs; a local device's call: ${coldRttUs.local.toFixed(1)} µs)`,
      },
      {
        id: 'W4', unit: 'MiB/s', ours: round(uploadRate.salus, 1), baseline: round(uploadRate.local, 1), ratio: round(uploadRate.salus / uploadRate.local),
        target: TARGETS.upload.atLeast, paper: TARGETS.upload.paper,
        what: `${options.uploadMib} MiB writeBuffer + onSubmittedWorkDone, every repetition including the first (${options.uploadRepeats} per fresh job), service / local at the median time`,
      },
      {
        id: 'W4.first', unit: 'MiB/s', ours: round(uploadRate.salusFirst, 1), baseline: round(uploadRate.localFirst, 1), ratio: round(uploadRate.salusFirst / uploadRate.localFirst),
        target: TARGETS.upload.atLeast, paper: TARGETS.upload.paper,
        what: `${options.uploadMib} MiB writeBuffer + onSubmittedWorkDone, the first of each fresh job only, service / local at the median time`,
      },
      {
        id: 'W4.read', unit: 'MiB/s', ours: round(uploadRate.salusRead, 1), baseline: round(uploadRate.localRead, 1), ratio: round(uploadRate.salusRead / uploadRate.localRead),
        target: TARGETS.upload.atLeast, paper: 'issue 19: readbacks the same way back as uploads',
        what: `${options.uploadMib} MiB readback (copyBufferToBuffer, mapAsync READ, getMappedRange), ${options.uploadReadbacks} per fresh job, service / local at the median time`,
      },
      ...ceiling.map((c): SummaryRow => ({
        id: `W5.${c.jobs}`, unit: 'commands/s', ours: round(c.commandsPerSecond, 0), baseline: round(localCommandsPerSecond, 0),
        ratio: round(c.commandsPerSecond / localCommandsPerSecond), paper: TARGETS.ceiling.paper,
        what: `the service's ceiling: cheap commands replayed per second with ${c.jobs} job${c.jobs === 1 ? '' : 's'} sending at once (over ${(c.windowMs / 1000).toFixed(1)} s), vs one job on a local device`,
      })),
    ];

    const rows: TableRow[] = [
      {
        metric: 'W1 CPU per cheap command (job + service)', salus: `${cpu.salus.toFixed(2)} µs`, reference: `${cpu.local.toFixed(2)} µs`,
        ratio: times(cpu.salus / cpu.local), goal: `≤${TARGETS.cpuPerCommand.atMost}x`, met: cpu.salus / cpu.local <= TARGETS.cpuPerCommand.atMost,
      },
      {
        metric: `W2 wall per dispatchWorkgroups(1), ${options.dispatches}/submit (p25)`, salus: us(dispatchUs.salus), reference: us(dispatchUs.local),
        ratio: times(dispatchUs.salus / dispatchUs.local), goal: `≤${TARGETS.smallDispatch.atMost}x`, met: dispatchUs.salus / dispatchUs.local <= TARGETS.smallDispatch.atMost,
      },
      {
        metric: 'W3 idle awaited call vs raw socket round trip (both awake)', salus: us(rttUs.salus), reference: us(rttUs.raw),
        ratio: `+${addedUs.toFixed(1)} µs`, goal: `≤+${TARGETS.idleCallAddedUs.atMost} µs`, met: addedUs <= TARGETS.idleCallAddedUs.atMost,
      },
      {
        metric: `W3.cold the same, calls 10-${options.coldPings} of a fresh process`, salus: us(coldRttUs.salus), reference: us(coldRttUs.raw),
        ratio: `+${coldAddedUs.toFixed(1)} µs`, goal: '', met: null,
      },
      ...([
        ['W4', 'writeBuffer, every repetition', uploadRate.salus, uploadRate.local],
        ['W4.first', 'writeBuffer, first per job', uploadRate.salusFirst, uploadRate.localFirst],
        ['W4.read', 'readback (mapAsync READ)', uploadRate.salusRead, uploadRate.localRead],
      ] as const)
        .map(([id, which, ours, baseline]): TableRow => ({
          metric: `${id} ${options.uploadMib} MiB ${which}`, salus: `${ours.toFixed(0)} MiB/s`, reference: `${baseline.toFixed(0)} MiB/s`,
          ratio: times(ours / baseline), goal: `≥${TARGETS.upload.atLeast}x`, met: ours / baseline >= TARGETS.upload.atLeast,
        })),
      ...ceiling.map((c): TableRow => ({
        metric: `W5.${c.jobs} service ceiling, ${c.jobs} job${c.jobs === 1 ? '' : 's'} at once`, salus: `${(c.commandsPerSecond / 1000).toFixed(0)}k commands/s`,
        reference: `${(localCommandsPerSecond / 1000).toFixed(0)}k (1 local job)`, ratio: times(c.commandsPerSecond / localCommandsPerSecond), goal: '', met: null,
      })),
    ];

    return {
      name: 'wire',
      method: `One warmed salus serve (an untimed job of ${options.warmupBatches} cheap batches first). W1-W3: ${options.rounds} rounds of a call-path job through the service, one local, one raw Node-Node socket ping-pong, ABBA; `
        + `cheap batches = 10 passes x 100 (setPipeline, setBindGroup, dispatchWorkgroups(0)), ${options.cheapBatches} timed per process, CPU = process.cpuUsage of the job + the schedstat of salus serve's live threads read by the job around them; `
        + `${options.pings} awaited empty calls per process (W3 after the first ${options.coldPings}, W3.cold the 10th to the ${options.coldPings}th); ${options.submits} submits of ${options.dispatches} dispatchWorkgroups(1) (first left out), W2 at their lower quartile. `
        + `W4: ${options.uploadRounds} fresh upload jobs per side, ${options.uploadRepeats} x ${options.uploadMib} MiB each, all counted, then ${options.uploadReadbacks} whole readbacks each (W4.read). `
        + `W5: under ${CEILING_POLICY} (a lane per job), N call-path jobs started together (start file), sending cheap batches for ${options.ceilingSeconds} s; commands completed while all N were timing / that window. Medians elsewhere.`,
      rows,
      summaryRows,
      data: {
        options,
        // A fresh service's first commands: how much slower than the warmed service's (W1) they ran.
        warmup: { commands: warm.commands, cpuUsPerCommand: round(((warm.cpuMs + (warm.serviceCpuMs ?? 0)) * 1000) / warm.commands) },
        cpuUsPerCommand: { salus: rounded(summarize(salus.cpuUsPerCommand)), local: rounded(summarize(local.cpuUsPerCommand)), salusJob: rounded(summarize(salus.jobCpuUsPerCommand)), salusService: rounded(summarize(salus.serviceCpuUsPerCommand)) },
        commandsPerSecond: { salus: rounded(summarize(salus.commandsPerSecond)), local: rounded(summarize(local.commandsPerSecond)) },
        dispatchUs: { salus: rounded(summarize(salus.dispatchMs.map((v) => v * 1000))), local: rounded(summarize(local.dispatchMs.map((v) => v * 1000))) },
        gpuPerSubmitUs: gpuPerSubmit,
        roundTripUs: roundTrips(salus.pingMs, rawAwake.pingMs, raw.pingMs, local.pingMs, addedUs),
        coldRoundTripUs: roundTrips(salus.coldPingMs, rawAwake.coldPingMs, raw.coldPingMs, local.coldPingMs, coldAddedUs),
        uploadMs: Object.fromEntries((['salus', 'local'] as const).flatMap((side) => [
          [side, upload[side].ms.map((v) => round(v, 1))], [`${side}First`, upload[side].firstMs.map((v) => round(v, 1))], [`${side}Read`, upload[side].readMs.map((v) => round(v, 1))],
        ])),
        uploadMiBps: Object.fromEntries(Object.entries(uploadRate).map(([key, value]) => [key, round(value, 1)])),
        ceiling: ceiling.map((c) => ({ ...c, commandsPerSecond: round(c.commandsPerSecond, 0), windowMs: round(c.windowMs, 0), startSpreadMs: round(c.startSpreadMs, 0) })),
      },
    };
  } finally {
    await service.stop();
  }
}
