/**
 * Discarded contents. Frameworks pool their GPU buffers: TF.js's BufferManager
 * and ONNX Runtime Web's data manager keep a released buffer for reuse instead of
 * destroying it, so the service would count a framework's whole pool as model
 * state. The framework adapters of core/client/adapters send `discard` when a
 * buffer goes back to the framework's pool: its contents are dead, the job keeps
 * the buffer. Here its memory goes back at once (to the lane when an iteration
 * holds it, else destroyed) and the entry points at a destroyed placeholder; its
 * next use allocates it again, zeroed, as a buffer created at that moment would
 * be (ephemeral inside an iteration, persistent outside), and the bind groups
 * naming it are made again on first use. So what stays between iterations is
 * the model's true state, and the working set is served from lanes.
 */
import { COMMANDS, type Command, type CommandOp } from '../protocol/commands.js';
import type { MemoryManager } from '../memory/memoryManager.js';
import { moveBuffer, ReplayError, type BindGroupEntry, type BufferEntry, type ObjectTable } from './objects.js';

const COPY_DST = 0x8;

/** One destroyed 4-byte buffer per device: what a discarded entry's `obj` is, so no stale use reaches real memory. */
const placeholders = new WeakMap<GPUDevice, GPUBuffer>();

function placeholder(device: GPUDevice): GPUBuffer {
  let buffer = placeholders.get(device);
  if (!buffer) {
    buffer = device.createBuffer({ size: 4, usage: COPY_DST, label: 'salus: discarded buffer' });
    buffer.destroy();
    placeholders.set(device, buffer);
  }
  return buffer;
}

/** What discarding and bringing back need of a session. */
export interface DiscardContext {
  readonly jobId: string;
  readonly device: GPUDevice;
  readonly table: ObjectTable;
  readonly memory: MemoryManager;
}

/**
 * The `discard` command: gives `entry`'s memory back. A hint, so it is ignored (false) where it cannot
 * apply: a buffer that is destroyed, unaccounted, mapped or mapping, already discarded, or named by a
 * live encoder or command buffer (whose recorded commands hold its real buffer until submit).
 */
export function discardBuffer(ctx: DiscardContext, entry: BufferEntry): boolean {
  if (entry.destroyed || !entry.lease || entry.discarded || entry.mapped) return false;
  if (entry.lease.residency !== 'resident' || entry.obj.mapState !== 'unmapped' || ctx.table.isRecorded(entry)) return false;
  // Work the job submitted before still runs on the queue; a freed lease's buffer is reused or destroyed only after it.
  ctx.memory.freeDiscarded(entry.lease);
  entry.discardedLease = entry.lease;
  entry.lease = null;
  entry.discarded = true;
  ctx.table.everDiscarded = true;
  moveBuffer(entry, placeholder(ctx.device));
  return true;
}

/**
 * Brings a discarded buffer back, now: used again in the iteration that discarded it, it takes back its own
 * memory (the same real buffer, so nothing built on it is stale); else it is allocated again (zeroed, or the
 * job's own old bytes). An out-of-memory or invalid allocation is the job's error here.
 */
export function reviveBuffer(ctx: DiscardContext, entry: BufferEntry): void {
  const freed = entry.discardedLease;
  entry.discardedLease = null;
  if (freed && ctx.memory.takeBack(freed)) {
    entry.lease = freed;
    moveBuffer(entry, freed.buffer);
    entry.discarded = false;
    return;
  }
  const result = ctx.memory.allocate(ctx.jobId, { size: entry.sizeBytes, usage: entry.usage, label: entry.label }, { ownBytes: true });
  if (!result.ok) throw new ReplayError(`${result.message} (to use again the pooled buffer '${entry.label ?? ''}')`, result.errorType);
  entry.lease = result.lease;
  moveBuffer(entry, result.lease.buffer);
  entry.discarded = false;
}

/** Calls `visit` with the id of each buffer and bind group a command uses (bringing back discarded buffers among them); no array per command. */
function visitIdsUsed(cmd: Command, visit: (id: number) => void): void {
  switch (cmd.op) {
    case 'writeBuffer': case 'mapAsync': case 'readMapped': case 'writeMapped': case 'unmap':
      return visit(cmd.id);
    case 'createBindGroup':
      for (const entry of cmd.entries) visit(entry.buffer);
      return;
    case 'setBindGroup':
      if (cmd.bindGroup !== null) visit(cmd.bindGroup);
      return;
    case 'dispatchIndirect': case 'clearBuffer':
      return visit(cmd.buffer);
    case 'copyBufferToBuffer':
      visit(cmd.src);
      return visit(cmd.dst);
    case 'resolveQuerySet':
      return visit(cmd.dst);
    case 'createBindGroupOfResources':
      for (const entry of cmd.entries) if (entry.buffer !== undefined) visit(entry.buffer);
      return;
    case 'copyBufferToTexture':
      return visit(cmd.source.buffer);
    case 'copyTextureToBuffer':
      return visit(cmd.destination.buffer);
    default:
  }
}

/** Whether each opcode's commands name buffers or bind groups that visitIdsUsed visits (its switch's cases). */
const USES_IDS: Uint8Array = (() => {
  const ops: CommandOp[] = [
    'writeBuffer', 'mapAsync', 'readMapped', 'writeMapped', 'unmap', 'createBindGroup', 'setBindGroup', 'dispatchIndirect', 'clearBuffer',
    'copyBufferToBuffer', 'resolveQuerySet', 'createBindGroupOfResources', 'copyBufferToTexture', 'copyTextureToBuffer',
  ];
  const uses = new Uint8Array(256);
  for (const op of ops) uses[COMMANDS[op].code] = 1;
  return uses;
})();

/** Bytes that replaying `cmds` (opcodes `codes`) would allocate again: the discarded buffers they use, once each. */
export function discardedBytes(table: ObjectTable, memory: MemoryManager, cmds: readonly Command[], codes: readonly number[]): number {
  // A job that never discarded a buffer (no framework adapter) has none to bring back: no walk per batch.
  if (!table.everDiscarded) return 0;
  let bytes = 0;
  let seen: Set<BufferEntry> | null = null;
  const add = (entry: BufferEntry) => {
    // One taken back (MemoryManager.takeBack) needs no new memory.
    if (!entry.discarded || seen?.has(entry) || (entry.discardedLease && memory.canTakeBack(entry.discardedLease))) return;
    (seen ??= new Set()).add(entry);
    bytes += entry.sizeBytes;
  };
  const visit = (id: number) => {
    const entry = table.peek(id);
    if (entry?.kind === 'buffer') add(entry);
    else if (entry?.kind === 'bindGroup') for (const buffer of entry.buffers) add(buffer);
  };
  for (let i = 0; i < codes.length; i++) if (USES_IDS[codes[i]]) visitIdsUsed(cmds[i], visit);
  return bytes;
}

/** Whether a bind group names a buffer that was discarded or moved since it was made. */
export function isStale(group: BindGroupEntry): boolean {
  for (let i = 0; i < group.buffers.length; i++) {
    const buffer = group.buffers[i];
    if (buffer.discarded || buffer.obj !== group.builtOn[i]) return true;
  }
  return false;
}
