/**
 * Reading and comparing the results of conformance/tfjs/job.js: the same
 * TF.js specs run on a local device and through the service, and every spec
 * whose outcome differs. A spec that passes locally but not through the
 * service is a regression of the remote WebGPU, unless it is known to be flaky
 * on a local device too (flaky.ts).
 */
import { readFileSync } from 'node:fs';
import { isLocallyFlaky } from './flaky.js';

/** What jasmine said about one spec. */
export type SpecStatus = 'passed' | 'failed' | 'pending';

/** One spec's outcome, as the job writes it. */
export interface SpecResult {
  name: string;
  status: SpecStatus;
  /** The first failure's message, for a failed spec. */
  message?: string;
  durationMs: number | null;
}

/** One run of the job, read back from its --out file. */
export interface SuiteRun {
  specs: Map<string, SpecResult>;
  /** beforeAll/afterAll failures (a backend that could not be created shows up here). */
  suiteErrors: Array<{ name: string; message: string }>;
  counts: Record<SpecStatus, number>;
  /** False when the file has no summary line: the job died before the suite ended. */
  complete: boolean;
  durationMs: number | null;
  /** How many times TF.js asked for an adapter (once per backend it created). */
  adaptersRequested: number | null;
}

/** A spec whose outcome differs between the two runs ('missing': not reached). */
export interface SpecDifference {
  name: string;
  local: SpecStatus | 'missing';
  remote: SpecStatus | 'missing';
  localMessage?: string;
  remoteMessage?: string;
  /** Why it is excused, for a spec known to be flaky on a local device. */
  flakyReason?: string;
}

/** The local run against the remote one. */
export interface SuiteComparison {
  local: Record<SpecStatus, number>;
  remote: Record<SpecStatus, number>;
  differing: SpecDifference[];
  /** Passed locally, did not pass remotely, and is not known to be flaky: each one fails the check. */
  regressions: SpecDifference[];
}

/** Reads the JSON lines the job wrote (a missing or empty file reads as an incomplete run with no specs). */
export function readSuiteRun(path: string): SuiteRun {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    // The job never started writing.
  }
  const run: SuiteRun = { specs: new Map(), suiteErrors: [], counts: { passed: 0, failed: 0, pending: 0 }, complete: false, durationMs: null, adaptersRequested: null };
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    const record = JSON.parse(line) as { spec?: SpecResult; suiteError?: { name: string; message: string }; summary?: { durationMs: number; adaptersRequested?: number } };
    if (record.spec) {
      run.specs.set(record.spec.name, record.spec);
      run.counts[record.spec.status]++;
    } else if (record.suiteError) {
      run.suiteErrors.push(record.suiteError);
    } else if (record.summary) {
      run.complete = true;
      run.durationMs = record.summary.durationMs;
      run.adaptersRequested = record.summary.adaptersRequested ?? null;
    }
  }
  return run;
}

/** Every spec whose outcome differs, and which of those are regressions. */
export function compareSuiteRuns(local: SuiteRun, remote: SuiteRun): SuiteComparison {
  const differing: SpecDifference[] = [];
  const names = new Set([...local.specs.keys(), ...remote.specs.keys()]);
  for (const name of names) {
    const [l, r] = [local.specs.get(name), remote.specs.get(name)];
    if (l?.status === r?.status) continue;
    const difference: SpecDifference = { name, local: l?.status ?? 'missing', remote: r?.status ?? 'missing' };
    if (l?.message) difference.localMessage = l.message;
    if (r?.message) difference.remoteMessage = r.message;
    const flaky = isLocallyFlaky(name);
    if (flaky) difference.flakyReason = flaky;
    differing.push(difference);
  }
  const regressions = differing.filter((d) => d.local === 'passed' && !d.flakyReason);
  return { local: local.counts, remote: remote.counts, differing, regressions };
}
