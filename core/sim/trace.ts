/**
 * Traces for `salus simulate`: one row per job, as CSV with a header or as a JSON
 * list of objects. Columns (the contract): name, arrivalS, iterations, iterationMs,
 * persistentBytes, ephemeralBytes, priority; optional: gapMs, the CPU time a job
 * spends between two of its iterations; durationMs, the GPU time the job declares it
 * will take (a hint, as `salus run --duration` gives; blank: undeclared), which need
 * not be its true time (iterations × iterationMs); share, its weight under FAIR (more
 * than 0; 1 when absent). Every value is checked; an error names the
 * line (CSV) or the entry (JSON), the column, what it found and what it expected.
 */
import { parseSize } from '../platform/size.js';

/** One job of a trace. */
export interface TraceJob {
  /** Unique within the trace. */
  name: string;
  /** Seconds after the trace's start when the job arrives. */
  arrivalS: number;
  /** Iterations it runs (its declared total). */
  iterations: number;
  /** GPU time of each iteration in its lane. */
  iterationMs: number;
  /** Declared persistent bytes (weights, optimizer state). */
  persistentBytes: number;
  /** Declared ephemeral peak of one iteration. */
  ephemeralBytes: number;
  /** Higher runs first under PRIORITY. */
  priority: number;
  /** CPU time between the end of one iteration and the request for the next (0: none). */
  gapMs: number;
  /** GPU time the job declares for its whole run (undefined: undeclared); its true time is iterations × iterationMs. */
  durationMs?: number;
  /** Weight of its GPU time under FAIR, > 0 (1 when absent). */
  share?: number;
}

/** The columns a trace must have, in the contract's order. */
export const TRACE_COLUMNS = ['name', 'arrivalS', 'iterations', 'iterationMs', 'persistentBytes', 'ephemeralBytes', 'priority'] as const;
/** Columns a trace may add. */
export const OPTIONAL_TRACE_COLUMNS = ['gapMs', 'durationMs', 'share'] as const;

const ALL_COLUMNS: readonly string[] = [...TRACE_COLUMNS, ...OPTIONAL_TRACE_COLUMNS];

/** A trace that cannot be read; the message says where and why. */
export class TraceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TraceError';
  }
}

type Field = string | number | undefined;

function numberOf(value: Field, column: string, where: string, rule: { whole?: boolean; min: number; above?: boolean; fallback?: number }): number {
  if ((value === undefined || value === '') && rule.fallback !== undefined) return rule.fallback;
  const n = typeof value === 'number' ? value : value === undefined || value.trim() === '' ? NaN : Number(value);
  const expected = `${rule.whole ? 'a whole number' : 'a number'} ${rule.above ? 'above' : 'of at least'} ${rule.min}`;
  if (!Number.isFinite(n) || (rule.whole && !Number.isInteger(n)) || (rule.above ? n <= rule.min : n < rule.min)) {
    throw new TraceError(`${where}: ${column} is ${JSON.stringify(value ?? null)}; expected ${expected}`);
  }
  return n;
}

function bytesOf(value: Field, column: string, where: string): number {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new TraceError(`${where}: ${column} is ${value}; expected a whole number of bytes, 0 or more`);
  }
  try {
    return parseSize(value === undefined ? '' : value);
  } catch (error) {
    throw new TraceError(`${where}: ${column}: ${(error as Error).message}`);
  }
}

function jobOf(row: Readonly<Record<string, Field>>, where: string): TraceJob {
  const name = typeof row.name === 'number' ? String(row.name) : (row.name ?? '').trim();
  if (name === '') throw new TraceError(`${where}: name is empty; every job needs a name`);
  const given = (value: Field) => value !== undefined && value !== '';
  return {
    name,
    arrivalS: numberOf(row.arrivalS, 'arrivalS', where, { min: 0 }),
    iterations: numberOf(row.iterations, 'iterations', where, { whole: true, min: 1 }),
    iterationMs: numberOf(row.iterationMs, 'iterationMs', where, { min: 0, above: true }),
    persistentBytes: bytesOf(row.persistentBytes, 'persistentBytes', where),
    ephemeralBytes: bytesOf(row.ephemeralBytes, 'ephemeralBytes', where),
    priority: numberOf(row.priority, 'priority', where, { min: -Number.MAX_VALUE, fallback: 0 }),
    gapMs: numberOf(row.gapMs, 'gapMs', where, { min: 0, fallback: 0 }),
    ...(given(row.durationMs) ? { durationMs: numberOf(row.durationMs, 'durationMs', where, { min: 0 }) } : {}),
    ...(given(row.share) ? { share: numberOf(row.share, 'share', where, { min: 0, above: true }) } : {}),
  };
}

function checkColumns(columns: readonly string[], where: string): void {
  const unknown = columns.filter((column) => !ALL_COLUMNS.includes(column));
  if (unknown.length > 0) throw new TraceError(`${where}: unknown column ${unknown.map((c) => `"${c}"`).join(', ')}; the columns are ${ALL_COLUMNS.join(', ')}`);
  const missing = TRACE_COLUMNS.filter((column) => !columns.includes(column));
  if (missing.length > 0) throw new TraceError(`${where}: missing column ${missing.join(', ')}; a trace needs ${TRACE_COLUMNS.join(',')}`);
}

/** Splits one CSV line; fields may be double-quoted ("" is a quote inside one). */
function splitCsvLine(line: string, where: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      for (i += 1; ; i += 1) {
        if (i >= line.length) throw new TraceError(`${where}: a quoted field is not closed`);
        if (line[i] === '"' && line[i + 1] === '"') { field += '"'; i += 1; } else if (line[i] === '"') { i += 1; break; } else field += line[i];
      }
      if (i < line.length && line[i] !== ',') throw new TraceError(`${where}: text after a quoted field`);
    } else {
      const end = line.indexOf(',', i);
      field = (end < 0 ? line.slice(i) : line.slice(i, end)).trim();
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i += 1; // the comma
  }
}

/** A parsed job and where it was read, for errors about the trace as a whole. */
interface Located {
  job: TraceJob;
  where: string;
}

function parseCsv(text: string, source: string): Located[] {
  const lines = text.split(/\r?\n/);
  let header: string[] | null = null;
  const jobs: Located[] = [];
  lines.forEach((line, index) => {
    const where = `${source} line ${index + 1}`;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const fields = splitCsvLine(line, where);
    if (!header) {
      header = fields;
      checkColumns(header, where);
      return;
    }
    if (fields.length !== header.length) {
      throw new TraceError(`${where}: ${fields.length} fields where the header has ${header.length} (${header.join(',')})`);
    }
    jobs.push({ job: jobOf(Object.fromEntries(header.map((column, i) => [column, fields[i]])), where), where });
  });
  if (!header) throw new TraceError(`${source}: no header; a trace starts with the line ${TRACE_COLUMNS.join(',')}`);
  return jobs;
}

function parseJson(text: string, source: string): Located[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TraceError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value)) throw new TraceError(`${source}: a JSON trace is a list of jobs ([{"name": …}, …])`);
  return value.map((entry: unknown, index) => {
    const where = `${source} job ${index + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new TraceError(`${where}: expected an object with ${TRACE_COLUMNS.join(', ')}`);
    const row = entry as Record<string, unknown>;
    checkColumns(Object.keys(row), where);
    for (const [key, field] of Object.entries(row)) {
      if (typeof field !== 'string' && typeof field !== 'number') throw new TraceError(`${where}: ${key} is ${JSON.stringify(field)}; expected a number or a string`);
    }
    const named = `${where} (${JSON.stringify(row.name ?? '')})`;
    return { job: jobOf(row as Record<string, Field>, named), where: named };
  });
}

/**
 * Reads a trace: JSON when the text starts with `[` or `{`, CSV otherwise (blank lines and
 * lines starting with `#` are skipped). `source` names the file in errors. Jobs keep
 * the file's order (jobs arriving at the same time arrive in that order).
 * @throws TraceError naming the line or entry, the column and the expected form.
 */
export function parseTrace(text: string, source = 'trace'): TraceJob[] {
  const located = /^\s*[[{]/.test(text) ? parseJson(text, source) : parseCsv(text, source);
  if (located.length === 0) throw new TraceError(`${source}: no jobs`);
  const firstSeen = new Map<string, string>();
  for (const { job, where } of located) {
    const earlier = firstSeen.get(job.name);
    if (earlier) throw new TraceError(`${where}: the name "${job.name}" is taken (${earlier.replace(`${source} `, '')}); names must be unique`);
    firstSeen.set(job.name, where);
  }
  return located.map(({ job }) => job);
}

/** Quotes a CSV field when it needs it (a comma, a quote, or spaces at its ends). */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",]|^\s|\s$/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The jobs as a CSV trace that `parseTrace` reads back: the contract's columns, plus
 * each optional column some job sets (gapMs when some job has a gap); `comments`
 * become `#` lines at the top.
 */
export function formatTraceCsv(jobs: readonly TraceJob[], comments: readonly string[] = []): string {
  const used = (column: (typeof OPTIONAL_TRACE_COLUMNS)[number]) => jobs.some((job) => (column === 'gapMs' ? job.gapMs > 0 : job[column] !== undefined));
  const columns: (keyof TraceJob)[] = [...TRACE_COLUMNS, ...OPTIONAL_TRACE_COLUMNS.filter(used)];
  const lines = [...comments.map((line) => `# ${line}`), columns.join(','), ...jobs.map((job) => columns.map((column) => csvField(job[column] ?? '')).join(','))];
  return `${lines.join('\n')}\n`;
}
