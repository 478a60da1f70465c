/**
 * Reading and comparing CTS runs: the runner's `--print-json` output of one
 * query, on a local device and through the service, and every case whose
 * outcome differs, grouped by cause (the first line of the remote failure with
 * its numbers and quoted names blanked), so one missing global or one limit
 * not enforced reads as one line with its count, not as hundreds of cases.
 */
import { locallyFlakyReason } from './flaky.js';

/** What the CTS said about one case. */
export type CaseStatus = 'pass' | 'fail' | 'warn' | 'skip';

export interface CaseResult {
  status: CaseStatus;
  /** The first logged line of a failing or skipped case (its exception or expectation). */
  message?: string;
  timeMs: number;
}

/** One query's run: its cases, or why there are none (the job died, the output had no JSON). */
export interface QueryRun {
  cases: Map<string, CaseResult>;
  error: string | null;
}

/** A case that passes locally and not through the service. */
export interface Regression {
  name: string;
  remote: CaseStatus | 'missing';
  message: string;
}

/** Regressions sharing a cause. */
export interface Cause {
  cause: string;
  count: number;
  examples: string[];
}

/** A case that passed locally and not through the service by chance: a known locally flaky case, with why. */
export interface FlakyCase extends Regression {
  reason: string;
}

const PASSING: ReadonlySet<CaseStatus> = new Set(['pass', 'warn']);

/**
 * Parses what the CTS runner printed with `--print-json`: the JSON document
 * (from its `{` and `"version"` to the last line `}`), whatever else (logs, a
 * summary, a driver's warning) came around it.
 */
export function parseQueryOutput(stdout: string): QueryRun {
  // The document's first line is `{`, but a driver's warning printed without a newline may stand before it.
  const start = stdout.search(/\{\n\s*"version"/);
  const end = stdout.lastIndexOf('\n}');
  if (start < 0 || end <= start) return { cases: new Map(), error: 'the runner printed no results (it died before the end of the query?)' };
  let document: { results?: [string, { status: CaseStatus; timems?: number; logs?: unknown[] }][] };
  try {
    document = JSON.parse(stdout.slice(start, end + 2));
  } catch (error) {
    return { cases: new Map(), error: `the runner's results are not JSON: ${(error as Error).message}` };
  }
  const cases = new Map<string, CaseResult>();
  for (const [name, result] of document.results ?? []) {
    const message = firstLogLine(result.logs);
    cases.set(name, { status: result.status, timeMs: result.timems ?? 0, ...(message ? { message } : {}) });
  }
  return { cases, error: null };
}

function firstLogLine(logs: unknown[] | undefined): string | undefined {
  for (const log of logs ?? []) {
    const text = typeof log === 'string' ? log : JSON.stringify(log);
    const line = text.split('\n').find((l) => l.trim() !== '');
    if (line) return line.trim();
  }
  return undefined;
}

/** The cases that pass locally and not through the service (missing remotely counts as not passing). */
export function regressions(local: QueryRun, remote: QueryRun): Regression[] {
  const found: Regression[] = [];
  for (const [name, result] of local.cases) {
    if (!PASSING.has(result.status)) continue;
    const there = remote.cases.get(name);
    if (there && PASSING.has(there.status)) continue;
    found.push({ name, remote: there?.status ?? 'missing', message: there?.message ?? remote.error ?? 'not run through the service' });
  }
  return found;
}

/** Regressions split into real ones and known locally flaky cases (see flaky.ts), which carry their reason. */
export function setApartLocallyFlaky(found: readonly Regression[]): { real: Regression[]; flaky: FlakyCase[] } {
  const real: Regression[] = [];
  const flaky: FlakyCase[] = [];
  for (const regression of found) {
    const reason = locallyFlakyReason(regression.name);
    if (reason) flaky.push({ ...regression, reason });
    else real.push(regression);
  }
  return { real, flaky };
}

/** A message with the parts that vary from case to case blanked: numbers, quoted names, ids. */
export function causeOf(message: string): string {
  return message
    .replace(/^\(in subcase: [^)]*\)\s*/, '')
    .replace(/^(EXCEPTION|EXPECTATION FAILED|VALIDATION FAILED|FAIL):\s*/, '')
    .replace(/'[^']*'|"[^"]*"|`[^`]*`/g, '…')
    .replace(/\b0x[0-9a-f]+\b|\b\d+(\.\d+)?\b/gi, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 200);
}

/** Regressions grouped by cause, largest first, with up to three example cases each. */
export function groupByCause(found: readonly Regression[]): Cause[] {
  const groups = new Map<string, Cause>();
  for (const regression of found) {
    const cause = causeOf(regression.message);
    const group = groups.get(cause) ?? { cause, count: 0, examples: [] };
    group.count++;
    if (group.examples.length < 3) group.examples.push(regression.name);
    groups.set(cause, group);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}

/** How many cases passed (pass or warn), and how many ran. */
export function passCount(run: QueryRun): { passed: number; total: number } {
  let passed = 0;
  for (const result of run.cases.values()) if (PASSING.has(result.status)) passed++;
  return { passed, total: run.cases.size };
}
