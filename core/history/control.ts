/** The `history` control call's answer: `salus history`'s filters, applied. */
import type { HistoryEntry, HistoryFilter } from '../protocol/history.js';
import { ErrorCode } from '../protocol/messages.js';
import { ControlError, type SalusService } from '../server/service.js';

/** The recorded jobs that match, newest first; a clear error when the service keeps no history. */
export function listHistory(service: SalusService, filter: HistoryFilter): HistoryEntry[] {
  const history = service.history;
  if (!history) {
    throw new ControlError('this service keeps no job history (its log says why when it started)', ErrorCode.NotAllowed);
  }
  return history.list(filter);
}
