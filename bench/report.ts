/**
 * The shape every benchmark returns, the summary table printed to stdout, and
 * the JSON file written to bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SummaryRow } from './summary.js';

/** One line of the summary table; numbers already formatted with their units. */
export interface TableRow {
  metric: string;
  /** Through the service (or the thing the goal is about). */
  salus: string;
  /** What it is compared with (local device, cold start), or '' when nothing. */
  reference: string;
  /** The comparison, e.g. `412x` or `1.04`, or ''. */
  ratio: string;
  goal: string;
  /** Whether the goal is met; null for rows without a goal. */
  met: boolean | null;
}

/** A benchmark's outcome: its headline rows and everything measured, for the JSON file. */
export interface BenchResult {
  name: string;
  /** How it was measured, in a sentence or two (goes into the JSON file). */
  method: string;
  rows: TableRow[];
  /** Its rows for the evaluation summary (bench/summary.ts), if it is one of issue 10's experiments. */
  summaryRows?: SummaryRow[];
  data: Record<string, unknown>;
}

/** Milliseconds, with precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return `${value.toFixed(0)} ms`;
  if (Math.abs(value) >= 1) return `${value.toFixed(2)} ms`;
  return `${(value * 1000).toFixed(0)} µs`;
}

/** Seconds from milliseconds: `1.25 s`, or `n/a`. */
export function secs(valueMs: number, digits = 2): string {
  return Number.isFinite(valueMs) ? `${(valueMs / 1000).toFixed(digits)} s` : 'n/a';
}

/** A ratio as `1.25×`, or `n/a` for none. */
export function times(value: number | null): string {
  return value === null ? 'n/a' : `${value.toFixed(2)}×`;
}

/** `median / p90` of a summary, in ms. */
export function medianP90(summary: { median: number; p90: number }): string {
  return `${ms(summary.median)} / ${ms(summary.p90)}`;
}

/** The summary table: one block per benchmark. */
export function formatTable(results: readonly BenchResult[]): string {
  const header: string[] = ['benchmark', 'metric', 'salus', 'reference', 'ratio', 'goal', ''];
  const body = results.flatMap((result) => result.rows.map((row, i) => [
    i === 0 ? result.name : '', row.metric, row.salus, row.reference, row.ratio, row.goal,
    row.met === null ? '' : row.met ? 'met' : 'MISSED',
  ]));
  const widths = header.map((_, c) => Math.max(...[header, ...body].map((cells) => cells[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** Where a run's JSON goes unless told: `bench/results/` under the repository root `root`. */
export function resultsDir(root: string): string {
  return join(root, 'bench', 'results');
}

/** Writes `<timestamp>.json` into `dir` (made if missing); returns its path. */
export function writeResults(dir: string, content: object, startedAt: Date): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`);
  return path;
}
