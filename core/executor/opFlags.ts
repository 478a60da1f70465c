/**
 * What the session's replay loop needs to know of each op, as bits of one
 * number per opcode (commandTable.ts's `code`): read by index for every
 * command, so an ordinary command costs the loop no Set lookup and no string
 * compare. The observers (the working set, the bind group sources) name the
 * ops they watch; the loop calls each only for those.
 *
 * Adding a command needs a line here only when the loop must treat it
 * specially (a sync point, a release, a command the session runs itself).
 */
import { COMMANDS, type CommandOp } from '../protocol/commands.js';
import { BIND_GROUP_SOURCE_OPS } from './residency.js';
import { WORKING_SET_OPS } from './workingSet.js';

/** Only lets go of things: it still belongs to the iteration before it. */
export const OP_RELEASE = 1 << 0;
/** An inferred iteration ends after it (the job waits on the GPU there). */
export const OP_SYNC = 1 << 1;
/** A queue submit. */
export const OP_SUBMIT = 1 << 2;
/** Its reply may be large: it waits until the job reads its replies. */
export const OP_LARGE_REPLY = 1 << 3;
/** Run by the session itself (iterations, devices, error scopes), not by a replay handler. */
export const OP_SESSION = 1 << 4;
/** A compute dispatch (the iteration counts it). */
export const OP_DISPATCH = 1 << 5;
/** The working set tracker observes it (core/executor/workingSet.ts). */
export const OP_WORKING_SET = 1 << 6;
/** The bind group sources observe it (core/executor/residency.ts). */
export const OP_BIND_GROUP_SOURCES = 1 << 7;

const FLAGGED: readonly (readonly [number, readonly CommandOp[]])[] = [
  [OP_RELEASE, ['destroy', 'unmap', 'setLabel', 'release', 'discard', 'readMapped', 'writeMapped']],
  [OP_SYNC, ['mapAsync', 'workDone', 'popErrorScope']],
  [OP_SUBMIT, ['submit']],
  [OP_LARGE_REPLY, ['readMapped', 'mapAsync']],
  [OP_SESSION, ['iterationBegin', 'iterationEnd', 'configureDevice', 'useDevice', 'destroyDevice', 'pushErrorScope', 'popErrorScope']],
  [OP_DISPATCH, ['dispatch', 'dispatchIndirect']],
  [OP_WORKING_SET, WORKING_SET_OPS],
  [OP_BIND_GROUP_SOURCES, BIND_GROUP_SOURCE_OPS],
];

/** The flags of each opcode (0 for an opcode no command has: the decoder never yields one). */
export const OP_FLAGS: Uint8Array = (() => {
  const flags = new Uint8Array(256);
  for (const [flag, ops] of FLAGGED) for (const op of ops) flags[COMMANDS[op].code] |= flag;
  return flags;
})();

/** The index of the last of `codes` whose flags include `flag` (-1: none); scans from the end, where they usually are. */
export function lastIndexWith(codes: readonly number[], flag: number): number {
  for (let i = codes.length - 1; i >= 0; i--) if (OP_FLAGS[codes[i]] & flag) return i;
  return -1;
}
