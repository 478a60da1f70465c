/**
 * The header of a job's batch frame, checked by hand: the one message on the hot
 * path (every submit, every await), where running the zod schema cost about as
 * much as decoding the batch's commands. It accepts exactly what
 * `jobMessageSchema`'s batch accepts (test/unit/protocol/batchHeader.test.ts
 * holds the two equal); anything it does not accept goes to the schema, whose
 * error the peer is told.
 */
import type { JobWireMessage } from './messages.js';

/** A batch frame's header, as jobMessageSchema parses it. */
export type BatchHeader = Extract<JobWireMessage, { t: 'batch' }>;

const MAX_COMMAND_BYTES = 0xffffffff;

/** `header` as a batch header when it is a well-formed one (unknown keys dropped, as zod does), else null. */
export function readBatchHeader(header: unknown): BatchHeader | null {
  if (typeof header !== 'object' || header === null || (header as { t?: unknown }).t !== 'batch') return null;
  const { commandBytes, scratchBytes } = header as { commandBytes?: unknown; scratchBytes?: unknown };
  if (!isCount(commandBytes, MAX_COMMAND_BYTES)) return null;
  if (scratchBytes === undefined) return { t: 'batch', commandBytes };
  if (!isCount(scratchBytes, Number.MAX_SAFE_INTEGER)) return null;
  return { t: 'batch', commandBytes, scratchBytes };
}

function isCount(value: unknown, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max;
}
