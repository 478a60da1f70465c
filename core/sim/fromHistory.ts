/**
 * A trace from the job history (`salus history --trace`): the jobs the service ran,
 * as `salus simulate` reads them, so a day's real workload can be replayed under
 * another policy or memory size.
 */
import type { HistoryEntry } from '../protocol/history.js';
import type { TraceJob } from './trace.js';

const tenths = (value: number) => Math.round(value * 10) / 10;

/**
 * One trace job per history entry that ran at least one iteration, in order of
 * submission (the first at 0 s). iterations: those it ran; iterationMs: its GPU time
 * per iteration; memory: its declared hints, else what was measured; gapMs: the rest
 * of its time from admission to its end (CPU work, set-up, round trips) per iteration;
 * durationMs and share: as it declared them, when it did.
 * Returns the jobs and how many entries were left out for running no iteration.
 */
export function traceFromHistory(entries: readonly HistoryEntry[]): { jobs: TraceJob[]; skipped: number } {
  const ran = entries.filter((entry) => entry.iterations.done > 0).sort((a, b) => a.submittedAt - b.submittedAt || a.id.localeCompare(b.id));
  const startMs = ran.length > 0 ? ran[0].submittedAt : 0;
  const nameCount = new Map<string, number>();
  for (const entry of ran) nameCount.set(entry.name, (nameCount.get(entry.name) ?? 0) + 1);
  const jobs = ran.map((entry): TraceJob => {
    const iterations = entry.iterations.done;
    const iterationMs = entry.attainedMs > 0 ? entry.attainedMs / iterations : (entry.avgIterationMs ?? 0);
    const livedMs = entry.finishedAt !== null && entry.startedAt !== null ? entry.finishedAt - entry.startedAt : null;
    return {
      // Names repeat across runs of the same script; a trace's must not.
      name: nameCount.get(entry.name)! > 1 ? `${entry.name} (${entry.id})` : entry.name,
      arrivalS: (entry.submittedAt - startMs) / 1000,
      iterations,
      iterationMs: Math.max(0.1, tenths(iterationMs)),
      persistentBytes: entry.spec.hints.persistentBytes ?? entry.memory.persistentBytes,
      ephemeralBytes: entry.spec.hints.ephemeralBytes ?? entry.memory.ephemeralPeakBytes,
      priority: entry.priority,
      gapMs: livedMs === null ? 0 : Math.max(0, tenths((livedMs - entry.attainedMs - entry.queuedMs) / iterations)),
      ...(entry.spec.hints.durationMs !== undefined ? { durationMs: entry.spec.hints.durationMs } : {}),
      ...(entry.spec.hints.share !== undefined ? { share: entry.spec.hints.share } : {}),
    };
  });
  return { jobs, skipped: entries.length - ran.length };
}
