/**
 * The job history of a `salus serve`: opens the store in the data folder,
 * starts a run, fails the jobs its earlier runs left unfinished ("lost with the
 * service"), and hands the service what it shows of them. Without a working
 * store the service runs on, without history, and says why.
 */
import { HistoryRecorder } from './recorder.js';
import { DEFAULT_RETENTION, HistoryStore } from './store.js';

export { resolveDataDir } from './dataDir.js';
export type { HistoryRecorder } from './recorder.js';

/** Jobs of earlier runs that `salus jobs` and the panel show (all of them: `salus history`). */
export const EARLIER_JOBS_SHOWN = 100;

export interface OpenHistoryOptions {
  dataDir: string;
  /** Which service this is: its socket path. */
  serviceKey: string;
  version: string;
  log: (line: string) => void;
}

/** Opens the history for a service starting now; null (after logging why) when it cannot be kept. */
export function openJobHistory(options: OpenHistoryOptions): HistoryRecorder | null {
  let store: HistoryStore | null = null;
  try {
    store = HistoryStore.open(options.dataDir, options.log);
    const runId = store.beginRun(options.serviceKey, process.pid, options.version);
    const lost = store.markLostJobs(options.serviceKey, runId);
    if (lost.length) options.log(`salus: ${lost.length} job(s) of an earlier run were lost with the service: ${lost.map((job) => job.id).join(', ')}`);
    store.prune(DEFAULT_RETENTION);
    const earlier = store.earlierJobs(options.serviceKey, runId, EARLIER_JOBS_SHOWN);
    return new HistoryRecorder(store, options.serviceKey, runId, earlier, store.nextJobNumber(options.serviceKey), options.log);
  } catch (error) {
    store?.close();
    options.log(`salus: job history is off, the service runs without it: ${(error as Error).message}`);
    return null;
  }
}
