/** The `history` control call: `salus history`'s filters, checked, and the answer. */
import { z } from 'zod';
import type { HistoryEntry, HistoryFilter } from '../protocol/history.js';
import { ErrorCode } from '../protocol/messages.js';
import { ControlError, type SalusService } from '../server/service.js';

const JOB_STATES = ['queued', 'running', 'paused', 'done', 'failed', 'killed'] as const;

/** `history`'s one parameter. */
export const historyFilterSchema = z.object({
  states: z.array(z.enum(JOB_STATES)).max(JOB_STATES.length).optional(),
  name: z.string().min(1).max(256).optional(),
  sinceMs: z.number().finite().optional(),
  limit: z.number().int().positive().max(100_000).optional(),
}).strict();

/** The recorded jobs that match, newest first; a clear error when the service keeps no history. */
export function listHistory(service: SalusService, filter: HistoryFilter): HistoryEntry[] {
  const history = service.history;
  if (!history) {
    throw new ControlError('this service keeps no job history (its log says why when it started)', ErrorCode.NotAllowed);
  }
  return history.list(filter);
}
