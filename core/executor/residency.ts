/**
 * Residency by reference, the executor's side of paging (core/memory/paging.ts).
 * Before a job's batch replays, every buffer of that job is made resident: its
 * paged-out leases come back (new GPU buffers with the same contents), its
 * table points at them, and its bind groups that named the old buffers are
 * rebuilt from their descriptors. When the batch needs room that capacity no
 * longer has, buffers of idle jobs page out to host memory first, largest
 * first. A job is idle while none of its batches replays; its buffers that a
 * recorded but unsubmitted encoder or command buffer names, or that are mapped,
 * never page (those objects hold the old GPU buffer and cannot be rebuilt).
 * So "does not fit" becomes "fits, slower"; what still cannot fit fails at the
 * allocation, as before.
 */
import type { Command } from '../protocol/commands.js';
import type { BufferLease, MemoryManager, PageResult } from '../memory/memoryManager.js';
import { sizeClassBytes } from '../memory/bufferPool.js';
import type { BufferEntry, ObjectTable } from './objects.js';

/** What residency needs of a session. */
export interface ResidentSession {
  readonly jobId: string;
  /** The job's objects. */
  readonly objects: ObjectTable;
  /** True while one of its batches is being prepared or replayed; residency clears it while the job waits for room. */
  busy: boolean;
  readonly isClosed: boolean;
  /** Whether the log already said the job waited for room (it says so once per job). */
  warnedWaiting?: boolean;
  /** How its bind groups were made, to rebuild them. */
  readonly bindGroupSources: BindGroupSources;
  /** Ends the memory side of its last iteration if only that is open, so its buffers count as persistent and may page. */
  settleMemory(): void;
}

/** A bind group's descriptor, kept so it can be made again on buffers that paged back in. */
interface BindGroupSource {
  layout: GPUBindGroupLayout;
  label?: string;
  entries: Array<{ binding: number; buffer: number; offset?: number; size?: number }>;
}

/** Per session: the descriptors of its live bind groups. */
export class BindGroupSources {
  private readonly sources = new Map<number, BindGroupSource>();

  /** Records a bind group the job made (after its replay), forgets released ones. */
  observe(cmd: Command, table: ObjectTable, ok: boolean): void {
    if (cmd.op === 'release') this.sources.delete(cmd.id);
    if (cmd.op !== 'createBindGroup' || !ok) return;
    const layout = table.peek(cmd.layout);
    if (table.peek(cmd.id)?.kind !== 'bindGroup' || layout?.kind !== 'bindGroupLayout') return;
    this.sources.set(cmd.id, { layout: layout.obj, label: cmd.label, entries: cmd.entries });
  }

  /** Makes again, on the buffers' current GPU buffers, each bind group that names one of `moved`. */
  rebuild(device: GPUDevice, table: ObjectTable, moved: ReadonlySet<BufferEntry>): void {
    for (const [id, source] of this.sources) {
      const group = table.peek(id);
      if (group?.kind !== 'bindGroup' || !group.buffers.some((b) => moved.has(b))) continue;
      // A buffer the job released or destroyed since stays what it was: using the group fails as it did before paging.
      if (group.buffers.some((b) => b.destroyed)) continue;
      const entries = source.entries.map((entry, index) => {
        const buffer = group.buffers[index]; // replay keeps one buffer per entry, in order
        const offset = entry.offset ?? 0;
        // As replay does: a pooled buffer is bound with the job's size.
        const size = buffer.lease?.pooled ? (entry.size ?? Math.max(0, buffer.sizeBytes - offset)) : entry.size;
        return { binding: entry.binding, resource: { buffer: buffer.obj, offset, size } };
      });
      group.obj = device.createBindGroup({ layout: source.layout, entries, label: source.label });
    }
  }
}

/** Buffers of the session that must not page: named by a live encoder or command buffer, or mapped. */
function pinned(objects: ObjectTable): Set<BufferEntry> {
  const pins = new Set<BufferEntry>();
  for (const entry of objects.values()) {
    if (entry.kind === 'commandEncoder' || entry.kind === 'commandBuffer') for (const b of entry.used) pins.add(b);
    if (entry.kind === 'buffer' && entry.obj.mapState !== 'unmapped') pins.add(entry);
  }
  return pins;
}

/** How long a batch waits for room to page its job's buffers back in; then it replays, and a use of a buffer still paged out fails. */
const RESIDENCY_WAIT_MS = 60_000;

/** Bytes the batch will allocate, rounded up as a lane's pool would. */
function allocationBytes(cmds: readonly Command[]): number {
  return cmds.reduce((sum, cmd) => sum + (cmd.op === 'createBuffer' ? sizeClassBytes(cmd.size) : 0), 0);
}

/** One per service: pages idle jobs out and a batch's job in. */
export class Residency {
  private readonly sessions = new Set<ResidentSession>();
  /** Page-outs in flight, so a job's next batch waits for its own before paging back in. */
  private readonly inFlight = new Map<BufferLease, Promise<PageResult>>();
  /** One preparation at a time: two jobs never page each other out at once. */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly device: GPUDevice,
    private readonly memory: MemoryManager,
    private readonly log: (line: string) => void,
  ) {}

  add(session: ResidentSession): void {
    this.sessions.add(session);
  }

  remove(session: ResidentSession): void {
    this.sessions.delete(session);
  }

  /** Makes room for the batch and makes every buffer of its job resident; resolves when it may replay (undefined: at once). */
  prepare(session: ResidentSession, cmds: readonly Command[]): Promise<void> | undefined {
    // The common case costs no wait: nothing of the job is paged out or paging, and what it allocates fits.
    const allocating = allocationBytes(cmds);
    const pagedOut = this.memory.residency(session.jobId).pagedOutBytes > 0;
    if (!pagedOut && this.inFlight.size === 0 && (allocating === 0 || this.free() >= allocating)) return undefined;
    return this.prepareWaiting(session, cmds);
  }

  /**
   * Takes turns with other jobs' preparations until the job's buffers are all back; between tries (memory freed
   * by an iteration's end, a job leaving) the job is not busy, so others may page it out meanwhile.
   */
  private async prepareWaiting(session: ResidentSession, cmds: readonly Command[]): Promise<void> {
    const deadline = performance.now() + RESIDENCY_WAIT_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      const run = this.turn.then(() => this.prepareNow(session, cmds));
      this.turn = run.then(() => {}, () => {});
      if ((await run) || performance.now() > deadline || session.isClosed) return;
      session.busy = false;
      await new Promise((resolve) => setTimeout(resolve, wait));
      session.busy = true;
    }
  }

  /** One try; true when every buffer of the job is resident. */
  private async prepareNow(session: ResidentSession, cmds: readonly Command[]): Promise<boolean> {
    const paged: Array<{ entry: BufferEntry; lease: BufferLease }> = [];
    for (const entry of session.objects.values()) {
      if (entry.kind !== 'buffer' || !entry.lease || entry.destroyed) continue;
      const pending = this.inFlight.get(entry.lease);
      if (pending) await pending;
      if (entry.lease.residency === 'paged-out') paged.push({ entry, lease: entry.lease });
    }
    const neededBytes = allocationBytes(cmds) + paged.reduce((sum, p) => sum + p.lease.realSizeBytes, 0);
    if (neededBytes > 0) await this.makeRoom(session, neededBytes);
    const moved = new Set<BufferEntry>();
    let missing: string | null = null;
    for (const { entry, lease } of paged) {
      const result = this.memory.pageIn(lease);
      if (result.ok) {
        entry.obj = lease.buffer;
        moved.add(entry);
      } else {
        missing ??= result.message;
      }
    }
    if (missing && !session.warnedWaiting) {
      // Once per job: with jobs that take turns on too little memory, every turn waits a little.
      this.log(`salus: ${session.jobId}: waits for room to page its buffers back in (said once): ${missing}`);
      session.warnedWaiting = true;
    }
    if (moved.size > 0) await this.rebuild(session, moved);
    return missing === null;
  }

  private async rebuild(session: ResidentSession, moved: ReadonlySet<BufferEntry>): Promise<void> {
    this.device.pushErrorScope('validation');
    session.bindGroupSources.rebuild(this.device, session.objects, moved);
    const error = await this.device.popErrorScope();
    if (error) this.log(`salus: ${session.jobId}: rebuilding bind groups after paging in failed: ${error.message}`);
  }

  private free(): number {
    const map = this.memory.snapshot();
    return map.capacityBytes - (map.committedBytes ?? map.usedBytes);
  }

  /** Pages out idle jobs' buffers, largest first, until `bytes` are unreserved or nothing more can go. */
  private async makeRoom(session: ResidentSession, bytes: number): Promise<void> {
    if (this.free() >= bytes) return;
    const candidates: Array<{ owner: ResidentSession; entry: BufferEntry; lease: BufferLease }> = [];
    for (const owner of this.sessions) {
      if (owner === session || owner.busy) continue;
      owner.settleMemory();
      const pins = pinned(owner.objects);
      for (const entry of owner.objects.values()) {
        if (entry.kind !== 'buffer' || !entry.lease || entry.destroyed || pins.has(entry)) continue;
        if (entry.lease.kind === 'persistent' && entry.lease.residency === 'resident') candidates.push({ owner, entry, lease: entry.lease });
      }
    }
    candidates.sort((a, b) => b.lease.realSizeBytes - a.lease.realSizeBytes);
    for (const { owner, lease } of candidates) {
      if (this.free() >= bytes) return;
      if (owner.busy) continue; // It started a batch meanwhile: its buffers stay.
      const paging = this.memory.pageOut(lease);
      this.inFlight.set(lease, paging);
      const result = await paging.finally(() => this.inFlight.delete(lease));
      if (!result.ok && !/COPY_SRC|freed|released/.test(result.message)) this.log(`salus: ${owner.jobId}: page-out skipped: ${result.message}`);
    }
  }
}
