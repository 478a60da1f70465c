/**
 * `salus history` with no service running: the history read straight from the
 * data folder, every service's jobs in it. A job recorded as not over whose
 * service is gone is shown as it will be after the next start: failed, lost.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEntry, HistoryFilter } from '../protocol/history.js';
import { FINAL_STATES } from '../protocol/state.js';
import { HISTORY_FILE_NAME } from './dataDir.js';
import { HistoryStore } from './store.js';
import { isProcessAlive } from '../platform/processAlive.js';

/** The recorded jobs in `dataDir` that match, newest first; throws saying so when it holds no history. */
export function readHistoryOffline(dataDir: string, filter: HistoryFilter): HistoryEntry[] {
  if (!existsSync(join(dataDir, HISTORY_FILE_NAME))) {
    throw new Error(`no service is running and ${dataDir} holds no job history (pass the service's --data-dir, or start it with \`salus serve\`)`);
  }
  const store = HistoryStore.open(dataDir);
  try {
    const over = new Set(store.runs().filter((run) => run.stoppedAt !== null || !isProcessAlive(run.pid)).map((run) => run.runId));
    return store.list(filter, null, null).map((entry) => {
      if (FINAL_STATES.includes(entry.state) || !over.has(entry.runId)) return entry;
      return { ...entry, state: 'failed', lost: true, lane: null, error: `lost with the service: it is no longer running (last recorded ${entry.state})` };
    });
  } finally {
    store.close();
  }
}
