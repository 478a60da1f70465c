/**
 * The evaluation's summary (issue 10): one row per experiment result, in
 * `bench/results/summary.json` as `{machine, gpu, rows: [{id, what, ours,
 * baseline, unit, ratio, paper}]}`. Every experiment (E1–E6, S1, the GPU
 * runs of E4/E5, and issue 19's wire rows W1–W5) adds its rows through `addSummaryRows`; rows are keyed by `id`
 * (`E5.tfjs-mlp`, …), so a run replaces its own rows and keeps the others'.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** One result beside its baseline and the paper's figure. */
export interface SummaryRow {
  /** Experiment id, with the workload after a dot where there are several: `E4`, `E5.tfjs-cnn`. */
  id: string;
  /** What was compared, in a phrase. */
  what: string;
  /** Our figure (through the service, or the policy under test). */
  ours: number;
  /** What it is compared with (a local device, a cold start, FIFO, MPS-style packing). */
  baseline: number;
  /** Unit of `ours` and `baseline`, e.g. `ms`, `min`, `jobs/device`. */
  unit: string;
  /** Above 1 means ours is better (baseline/ours for times, ours/baseline for counts). */
  ratio: number;
  /**
   * The paper's figure for this experiment, as it states it (`3.19×`, `second-scale vs iteration-scale`);
   * for a row the paper has no figure for, the goal it measures (`issue 19: ≤ 1.1× local`).
   */
  paper: string;
  /** The target from the issue, if any (`≥ 0.90`); met when `ratio` reaches `target`. */
  target?: number;
  /** The GPU this row was measured on, where it differs from the summary's (`npm run bench -- --gpu`). */
  gpu?: string;
}

/** The whole file. */
export interface Summary {
  /** CPUs, memory, Node and commit of the latest writer. */
  machine: Record<string, unknown>;
  /** The adapter the latest writer's service opened, e.g. `SwiftShader Device (Subzero) (vulkan, software)`. */
  gpu: string;
  /** When it was last written (ISO). */
  updatedAt: string;
  rows: SummaryRow[];
}

/** Where the summary lives under the repository root `root`. */
export function summaryPath(root: string): string {
  return join(root, 'bench', 'results', 'summary.json');
}

/** The summary at `path`, or an empty one when there is none (or it does not parse). */
export function readSummary(path: string): Summary {
  if (existsSync(path)) {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as Summary;
      if (Array.isArray(parsed.rows)) return parsed;
    } catch {
      // A torn or hand-edited file: start over rather than fail the bench.
    }
  }
  return { machine: {}, gpu: '', updatedAt: '', rows: [] };
}

/**
 * Adds `rows` to the summary at `path` (replacing rows with the same id, keeping
 * the order of first appearance, new ids appended), sets `machine` and `gpu`,
 * writes it, and returns it.
 */
export function addSummaryRows(path: string, rows: readonly SummaryRow[], where: { machine: Record<string, unknown>; gpu: string }): Summary {
  const summary = readSummary(path);
  const byId = new Map(summary.rows.map((row) => [row.id, row]));
  for (const row of rows) byId.set(row.id, row);
  const next: Summary = { machine: where.machine, gpu: where.gpu, updatedAt: new Date().toISOString(), rows: [...byId.values()] };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}

const figure = (value: number) => (Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toFixed(2));

/** The rows as a plain-text table: id, what, ours, baseline, ratio, target (met or MISSED), paper. */
export function formatSummary(rows: readonly SummaryRow[]): string {
  const header = ['id', 'what', 'ours', 'baseline', 'ratio', 'target', 'paper'];
  const body = rows.map((row) => [
    row.id, row.what, `${figure(row.ours)} ${row.unit}`, `${figure(row.baseline)} ${row.unit}`, `${figure(row.ratio)}×`,
    row.target === undefined ? '' : `≥ ${row.target} ${row.ratio >= row.target ? 'met' : 'MISSED'}`, row.paper,
  ]);
  const widths = header.map((_, c) => Math.max(...[header, ...body].map((cells) => cells[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
