/**
 * `salus simulate TRACE [--policy NAME]... [--memory SIZE] [--gpus N] [--set KEY=VALUE]... [--max-speedup X] [--json]`:
 * runs a trace (core/sim/trace.ts) through the simulator under each policy asked for
 * (all five when none is) and prints a table per policy and a one-line comparison,
 * or with --json `{policies: [{policy, avgJctMs, makespanMs, jobs: [{name, jctMs, queuedMs}]}]}`
 * (with more fields).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { formatBytes, parseSize } from '../platform/size.js';
import { POLICY_NAMES, type PolicyParamValue } from '../protocol/state.js';
import { getPolicy, parseKnobValue } from '../scheduler/index.js';
import type { HistoryEntry } from '../protocol/history.js';
import { traceFromHistory } from '../sim/fromHistory.js';
import { simulate, type SimResult } from '../sim/simulator.js';
import { formatTraceCsv, parseTrace } from '../sim/trace.js';
import { table } from './format.js';

/** What `salus simulate` was asked to do. */
export interface SimulateRequest {
  tracePath: string;
  /** Canonical policy names, in the order given; all five when none was. */
  policies: string[];
  /** Of each GPU; null: unlimited (every job fits at once). */
  memoryBytes: number | null;
  /** How many GPUs (1 unless --gpus). */
  gpus: number;
  /** How much faster the GPU gets, at most, running lanes side by side; null: no limit. */
  maxSpeedup: number | null;
  /** Knob values per policy, each applied only to the policies that have the knob. */
  params: Record<string, Record<string, PolicyParamValue>>;
  json: boolean;
}

/** Reads `salus simulate`'s arguments. Throws an Error in the user's words on a bad one. */
export function parseSimulateArgs(args: string[]): SimulateRequest {
  const { values, positionals } = parseArgs({
    args, allowPositionals: true,
    options: {
      policy: { type: 'string', multiple: true }, memory: { type: 'string' }, set: { type: 'string', multiple: true },
      'max-speedup': { type: 'string' }, json: { type: 'boolean' }, gpus: { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw new Error('salus simulate needs one TRACE file (CSV or JSON)');
  const policies = (values.policy ?? [...POLICY_NAMES]).flatMap((list) => list.split(',')).map((name) => getPolicy(name.trim()).name);
  const params: SimulateRequest['params'] = Object.fromEntries(policies.map((name) => [name, {}]));
  for (const assignment of values.set ?? []) {
    const split = assignment.indexOf('=');
    const key = assignment.slice(0, Math.max(0, split));
    const owners = policies.filter((name) => getPolicy(name).knobs.some((knob) => knob.key === key));
    if (split <= 0 || owners.length === 0) {
      const keys = [...new Set(policies.flatMap((name) => getPolicy(name).knobs.map((knob) => knob.key)))];
      throw new Error(`--set ${assignment}: expected KEY=VALUE with KEY one of ${keys.join(', ')}`);
    }
    for (const name of owners) {
      try {
        params[name][key] = parseKnobValue(getPolicy(name), key, assignment.slice(split + 1));
      } catch (error) {
        throw new Error(`--set ${assignment}: ${(error as Error).message}`);
      }
    }
  }
  let memoryBytes: number | null = null;
  try {
    if (values.memory !== undefined) memoryBytes = parseSize(values.memory);
  } catch (error) {
    throw new Error(`--memory: ${(error as Error).message}`);
  }
  const maxSpeedup = values['max-speedup'] === undefined ? null : Number(values['max-speedup']);
  if (maxSpeedup !== null && !(maxSpeedup >= 1)) {
    throw new Error(`--max-speedup must be a number of at least 1 (1: lanes take turns on the GPU), got '${values['max-speedup']}'`);
  }
  const gpus = values.gpus === undefined ? 1 : Number(values.gpus);
  if (!(Number.isInteger(gpus) && gpus >= 1 && gpus <= 1024)) throw new Error(`--gpus must be a whole number from 1 to 1024, got '${values.gpus}'`);
  return { tracePath: positionals[0], policies: [...new Set(policies)], memoryBytes, gpus, maxSpeedup, params, json: Boolean(values.json) };
}

/** Runs the request's trace under each of its policies. Throws on an unreadable trace or a knob out of range. */
export function runSimulation(request: SimulateRequest): SimResult[] {
  let text: string;
  try {
    text = readFileSync(request.tracePath, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the trace ${request.tracePath}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  const trace = parseTrace(text, basename(request.tracePath));
  return request.policies.map((policy) => simulate(trace, {
    policy, params: request.params[policy], capacityBytes: request.memoryBytes ?? undefined, gpus: request.gpus, maxSpeedup: request.maxSpeedup ?? undefined,
  }));
}

/** A duration as people read it: 850 ms, 12.34 s, 170.6 min. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(2)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

function formatOne(result: SimResult, request: SimulateRequest): string {
  const memory = (request.memoryBytes === null ? 'memory unlimited' : `memory ${formatBytes(request.memoryBytes)}`) +
    (request.gpus > 1 ? ` on each of ${request.gpus} GPUs` : '');
  const speedup = request.maxSpeedup === null ? [] : [`lanes side by side at most ${request.maxSpeedup}× one lane's speed`];
  const set = Object.entries(request.params[result.policy] ?? {}).map(([key, value]) => `${key}=${value}`);
  const head = `${result.policy} (${[memory, ...speedup, ...set].join(', ')}): average JCT ${formatDuration(result.avgJctMs)}, makespan ${formatDuration(result.makespanMs)}, ` +
    `${result.peakLanes} lane${result.peakLanes === 1 ? '' : 's'} at most`;
  const rows = [['NAME', 'ARRIVAL', 'JCT', 'QUEUED', 'ADMISSION WAIT', 'LANE']];
  for (const job of result.jobs) {
    rows.push([job.name, formatDuration(job.arrivalMs), job.state === 'refused' ? 'refused' : formatDuration(job.jctMs), formatDuration(job.queuedMs), formatDuration(job.admissionWaitMs), job.lane ?? '-']);
  }
  const refused = result.jobs.filter((job) => job.state === 'refused').map((job) => `refused ${job.name}: ${job.reason}`);
  return [head, table(rows), ...refused].join('\n');
}

/** "SRTF: average JCT 3.10× better than FIFO; PACK: 1.20× better; …", against FIFO when it ran, else the first policy. */
export function formatComparison(results: readonly SimResult[]): string | null {
  const base = results.find((r) => r.policy === 'FIFO') ?? results[0];
  const others = results.filter((r) => r !== base);
  if (!base || others.length === 0 || base.avgJctMs === null) return null;
  const parts = others.map((r, i) => {
    if (r.avgJctMs === null) return `${r.policy}: no job ran`;
    const ratio = base.avgJctMs! / r.avgJctMs;
    const verdict = ratio >= 1 ? `${ratio.toFixed(2)}× better` : `${(1 / ratio).toFixed(2)}× worse`;
    return i === 0 ? `${r.policy}: average JCT ${verdict} than ${base.policy}` : `${r.policy}: ${verdict}`;
  });
  return parts.join('; ');
}

/** What `salus simulate` prints for these results. */
export function formatSimulation(results: readonly SimResult[], request: SimulateRequest): string {
  if (request.json) {
    return JSON.stringify({
      trace: request.tracePath,
      memoryBytes: request.memoryBytes,
      gpus: request.gpus,
      maxSpeedup: request.maxSpeedup,
      policies: results.map((r) => ({
        policy: r.policy, avgJctMs: r.avgJctMs, makespanMs: r.makespanMs, peakLanes: r.peakLanes, params: r.params,
        jobs: r.jobs.map(({ name, jctMs, queuedMs, ...more }) => ({ name, jctMs, queuedMs, ...more })),
      })),
    }, null, 2);
  }
  const comparison = formatComparison(results);
  return [...results.map((r) => formatOne(r, request)), ...(comparison ? [comparison] : [])].join('\n\n');
}

/** `salus history --trace`: the history's jobs that ran as a CSV trace, with a comment saying what was left out. */
export function historyTraceCsv(entries: readonly HistoryEntry[]): string {
  const { jobs, skipped } = traceFromHistory(entries);
  const notes = [`${jobs.length} jobs from salus history, for salus simulate (docs/simulator.md)`];
  if (skipped > 0) notes.push(`${skipped} more ran no iteration and are left out`);
  if (jobs.length === 0) return `${notes.map((line) => `# ${line}`).join('\n')}\n`;
  return formatTraceCsv(jobs, notes);
}
