/** `salus history`: its options, read into a HistoryFilter, and its table. */
import { formatBytes } from '../platform/size.js';
import type { HistoryEntry, HistoryFilter } from '../protocol/history.js';
import type { JobState } from '../protocol/state.js';
import { parseDurationMs } from '../platform/duration.js';

const STATES: readonly JobState[] = ['queued', 'running', 'paused', 'done', 'failed', 'killed'];
/** The filter for `salus history`'s options (as parseArgs gives them), at time `nowMs`. */
export function historyFilter(values: { state?: string[]; name?: string; since?: string; limit?: string }, nowMs = Date.now()): HistoryFilter {
  const filter: HistoryFilter = {};
  if (values.state?.length) {
    const states = values.state.flatMap((s) => s.split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
    const unknown = states.filter((s) => !STATES.includes(s as JobState));
    if (unknown.length) throw new Error(`--state ${unknown.join(',')}: a state is one of ${STATES.join(', ')}`);
    filter.states = states as JobState[];
  }
  if (values.name !== undefined) filter.name = values.name;
  if (values.since !== undefined) filter.sinceMs = nowMs - parseDurationMs(values.since);
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`--limit must be a whole number of jobs, 1 or more; got '${values.limit}'`);
    filter.limit = limit;
  }
  return filter;
}

function when(ms: number | null): string {
  if (ms === null) return '-';
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function took(entry: HistoryEntry): string {
  if (entry.finishedAt === null) return '-';
  const seconds = (entry.finishedAt - (entry.startedAt ?? entry.submittedAt)) / 1000;
  return seconds >= 60 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(1)} s`;
}

/** The plain-text table, newest first. */
export function formatHistory(entries: HistoryEntry[]): string {
  if (entries.length === 0) return 'no jobs recorded that match';
  const rows = [['ID', 'RUN', 'NAME', 'STATE', 'SUBMITTED', 'TOOK', 'ITERATIONS', 'AVG ITER', 'EPHEMERAL', 'ERROR']];
  for (const e of entries) {
    rows.push([
      e.id, `${e.runId}${e.fromEarlierRun ? '' : ' (now)'}`, e.name.slice(0, 24), e.state, when(e.submittedAt), took(e),
      e.iterations.total ? `${e.iterations.done}/${e.iterations.total}` : String(e.iterations.done),
      e.avgIterationMs === null ? '-' : `${e.avgIterationMs.toFixed(1)} ms`, formatBytes(e.memory.ephemeralPeakBytes),
      (e.error ?? '').slice(0, 70),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}
