/**
 * Residency by reference, the executor's side of paging (core/memory/paging.ts).
 * Before a job's batch replays, every buffer of that job is made resident: its
 * paged-out leases come back (new GPU buffers with the same contents) and its
 * table points at them; its bind groups that named the old buffers are made
 * again from their descriptors when next used (BindGroupSources.refresh). The
 * room a batch needs counts the buffers it creates and the discarded ones it
 * brings back (core/executor/discard.ts). When the batch needs room that capacity no
 * longer has, buffers of idle jobs page out to host memory first, largest
 * first. A job is idle while none of its batches replays; its buffers that a
 * recorded but unsubmitted encoder or command buffer names, or that are mapped,
 * never page (those objects hold the old GPU buffer and cannot be rebuilt).
 * So "does not fit" becomes "fits, slower"; what still cannot fit fails at the
 * allocation, as before.
 */
import { COMMANDS, type Command, type CommandOf, type CommandOp } from '../protocol/commands.js';
import type { BufferLease, MemoryManager, PageResult } from '../memory/memoryManager.js';
import { sizeClassBytes } from '../memory/bufferPool.js';
import { formatBytes } from '../platform/size.js';
import { currentBufferGeneration, moveBuffer, type BindGroupEntry, type BufferEntry, type ObjectTable } from './objects.js';
import { discardedBytes, isStale } from './discard.js';

/** What residency needs of a session. */
export interface ResidentSession {
  readonly jobId: string;
  /** The job's objects. */
  readonly objects: ObjectTable;
  /** True while one of its batches is being prepared or replayed; residency clears it while the job waits for room. */
  busy: boolean;
  readonly isClosed: boolean;
  /** Whether what it allocates now comes from its lane (an iteration of it holds the lane). */
  readonly running: boolean;
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
  /** Each entry: a buffer range (by the job's id), or the texture view or sampler it bound. */
  entries: Array<{ binding: number; buffer?: number; offset?: number; size?: number; resource?: GPUTextureView | GPUSampler | GPUTexture }>;
}

/** The ops BindGroupSources.observe handles: the session calls it for these only (opFlags.ts). */
export const BIND_GROUP_SOURCE_OPS: readonly CommandOp[] = ['release', 'createBindGroup', 'createBindGroupOfResources'];

/** Per session: the descriptors of its live bind groups. */
export class BindGroupSources {
  private readonly sources = new Map<number, BindGroupSource>();

  /** Records a bind group the job made (after its replay), forgets released ones. */
  observe(cmd: Command, table: ObjectTable, ok: boolean): void {
    if (cmd.op === 'release') this.sources.delete(cmd.id);
    if ((cmd.op !== 'createBindGroup' && cmd.op !== 'createBindGroupOfResources') || !ok) return;
    const layout = table.peek(cmd.layout);
    if (table.peek(cmd.id)?.kind !== 'bindGroup' || layout?.kind !== 'bindGroupLayout') return;
    const entries = cmd.op === 'createBindGroup' ? cmd.entries : cmd.entries.map((entry) => {
      const other = entry.buffer === undefined ? table.peek(entry.textureView ?? entry.sampler ?? entry.texture!) : undefined;
      return other?.kind === 'textureView' || other?.kind === 'sampler' || other?.kind === 'texture' ? { binding: entry.binding, resource: other.obj } : entry;
    });
    this.sources.set(cmd.id, { layout: layout.obj, label: cmd.label, entries });
  }

  /**
   * Makes `group` again, on its buffers' current GPU buffers, when one of them paged or was discarded since it
   * was made (discarded ones are brought back first, by `revive`). A group naming a buffer the job destroyed
   * stays what it was: its submit fails, as it would have.
   */
  refresh(id: number, group: BindGroupEntry, device: GPUDevice, revive: (buffer: BufferEntry) => void): void {
    const generation = currentBufferGeneration();
    if (!isStale(group)) {
      group.currentAt = generation;
      return;
    }
    const source = this.sources.get(id);
    if (!source || group.buffers.some((b) => b.destroyed)) return;
    for (const buffer of group.buffers) if (buffer.discarded) revive(buffer);
    let next = 0;
    const entries = source.entries.map((entry) => {
      if (entry.resource) return { binding: entry.binding, resource: entry.resource };
      const buffer = group.buffers[next++]; // replay keeps one buffer per buffer entry, in order
      const offset = entry.offset ?? 0;
      // As replay does: a pooled buffer is bound with the job's size.
      const size = buffer.lease?.pooled ? (entry.size ?? Math.max(0, buffer.sizeBytes - offset)) : entry.size;
      return { binding: entry.binding, resource: { buffer: buffer.obj, offset, size } };
    });
    group.obj = device.createBindGroup({ layout: source.layout, entries, label: source.label });
    group.builtOn = group.buffers.map((b) => b.obj);
    // Reviving its buffers may have moved others: current only as of now.
    group.currentAt = currentBufferGeneration();
  }
}

/** Buffers of the session that must not page: named by a live encoder or command buffer, or mapped. */
function pinned(objects: ObjectTable): Set<BufferEntry> {
  const pins = objects.recordedBuffers();
  for (const entry of objects.values()) {
    if (entry.kind === 'buffer' && entry.obj.mapState !== 'unmapped') pins.add(entry);
  }
  return pins;
}

/** How long a batch waits for room to page its job's buffers back in; then it replays, and a use of a buffer still paged out fails. */
const RESIDENCY_WAIT_MS = 60_000;

const CREATE_BUFFER = COMMANDS.createBuffer.code;

/**
 * Bytes the batch will allocate (rounded up as a lane's pool would): the buffers it creates and the discarded ones it
 * uses. `codes` are the commands' opcodes: only createBuffer's commands are read.
 */
function allocationBytes(cmds: readonly Command[], codes: readonly number[], table: ObjectTable, memory: MemoryManager): number {
  let created = 0;
  for (let i = 0; i < codes.length; i++) {
    if (codes[i] === CREATE_BUFFER) created += sizeClassBytes((cmds[i] as CommandOf<'createBuffer'>).size);
  }
  return created + sizeClassBytes(discardedBytes(table, memory, cmds, codes));
}

/** One per service: pages idle jobs out and a batch's job in. */
export class Residency {
  private readonly sessions = new Set<ResidentSession>();
  /** Page-outs in flight, so a job's next batch waits for its own before paging back in. */
  private readonly inFlight = new Map<BufferLease, Promise<PageResult>>();
  /** Batches waiting for room, woken when a job's batch ends or a job leaves. */
  private readonly waiters = new Set<() => void>();
  /** One preparation at a time: two jobs never page each other out at once. */
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly memory: MemoryManager,
    private readonly log: (line: string) => void,
  ) {}

  add(session: ResidentSession): void {
    this.sessions.add(session);
  }

  remove(session: ResidentSession): void {
    this.sessions.delete(session);
    this.wakeWaiters();
  }

  /** The job's batch ended, or waits for a grant: room held for its allocations goes back. */
  release(session: ResidentSession): void {
    this.memory.holdRoom(session.jobId, 0);
    this.wakeWaiters();
  }

  /** Batches waiting for room try again now: a job just went idle (its buffers may page) or left. */
  private wakeWaiters(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
  }

  /** Makes room for the batch and makes every buffer of its job resident; resolves when it may replay (undefined: at once). */
  prepare(session: ResidentSession, cmds: readonly Command[], codes: readonly number[]): Promise<void> | undefined {
    // The common case costs no wait: nothing of the job is paged out or paging, and what it allocates fits.
    const allocating = allocationBytes(cmds, codes, session.objects, this.memory);
    const pagedOut = this.memory.residency(session.jobId).pagedOutBytes > 0;
    if (!pagedOut && this.inFlight.size === 0 && (allocating === 0 || this.shortBytes(session, 0, allocating) === 0)) return undefined;
    return this.prepareWaiting(session, cmds, codes);
  }

  /** Bytes the job could not get now of `pagedBytes` to page in and `allocatingBytes` to allocate (0: all fit). */
  private shortBytes(session: ResidentSession, pagedBytes: number, allocatingBytes: number): number {
    if (!session.running) return this.memory.shortfallBytes(session.jobId, pagedBytes + allocatingBytes, 'persistent');
    return this.memory.shortfallBytes(session.jobId, pagedBytes, 'persistent') + this.memory.shortfallBytes(session.jobId, allocatingBytes, 'ephemeral');
  }

  /**
   * Whether waiting can give the job `bytes` more: other jobs hold memory that may page out or end. A job that
   * would not fit even alone does not wait; its allocation fails at once, as out of memory.
   */
  private othersCanMakeRoom(session: ResidentSession, bytes: number): boolean {
    const own = this.memory.residency(session.jobId).residentBytes;
    return this.sessions.size > 1 && own + bytes <= this.memory.capacityBytes;
  }

  /**
   * Takes turns with other jobs' preparations until the job's buffers are all back; between tries (memory freed
   * by an iteration's end, a job leaving) the job is not busy, so others may page it out meanwhile.
   */
  private async prepareWaiting(session: ResidentSession, cmds: readonly Command[], codes: readonly number[]): Promise<void> {
    const deadline = performance.now() + RESIDENCY_WAIT_MS;
    for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
      const run = this.turn.then(() => this.prepareNow(session, cmds, codes));
      this.turn = run.then(() => {}, () => {});
      if (await run) {
        // The room it made stays its own until the batch allocates (or lets go, release()): no other job's turn takes it.
        this.memory.holdRoom(session.jobId, allocationBytes(cmds, codes, session.objects, this.memory));
        return;
      }
      if (performance.now() > deadline || session.isClosed) return;
      session.busy = false;
      // Until another job's batch ends (its buffers may page now: busy jobs' gaps are short) or a while passes.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => { this.waiters.delete(wake); resolve(); }, wait);
        const wake = () => { clearTimeout(timer); resolve(); };
        this.waiters.add(wake);
      });
      session.busy = true;
    }
  }

  /** One try; true when every buffer of the job is resident. */
  private async prepareNow(session: ResidentSession, cmds: readonly Command[], codes: readonly number[]): Promise<boolean> {
    const paged: Array<{ entry: BufferEntry; lease: BufferLease }> = [];
    for (const entry of session.objects.values()) {
      if (entry.kind !== 'buffer' || !entry.lease || entry.destroyed) continue;
      const pending = this.inFlight.get(entry.lease);
      if (pending) await pending;
      if (entry.lease.residency === 'paged-out') paged.push({ entry, lease: entry.lease });
    }
    const allocating = allocationBytes(cmds, codes, session.objects, this.memory);
    const pagedBytes = paged.reduce((sum, p) => sum + p.lease.realSizeBytes, 0);
    const short = () => this.shortBytes(session, pagedBytes, allocating);
    if (short() > 0) await this.makeRoom(session, () => short() === 0);
    let missing: string | null = null;
    for (const { entry, lease } of paged) {
      const result = this.memory.pageIn(lease);
      if (result.ok) {
        moveBuffer(entry, lease.buffer); // its bind groups are made again when next used
      } else {
        missing ??= `paging its buffers back in: ${result.message}`;
      }
    }
    // Buffers it creates, or discarded ones it uses again, wait for room too rather than fail for lack of it.
    const allocatingShort = this.shortBytes(session, 0, allocating);
    if (!missing && allocatingShort > 0 && this.othersCanMakeRoom(session, allocating)) {
      missing = `its next commands allocate ${formatBytes(allocating)} and ${formatBytes(allocatingShort)} of it is not free`;
    }
    if (missing && !session.warnedWaiting) {
      // Once per job: with jobs that take turns on too little memory, every turn waits a little.
      this.log(`salus: ${session.jobId}: waits for GPU memory (said once): ${missing}`);
      session.warnedWaiting = true;
    }
    return missing === null;
  }

  /** Pages out idle jobs' buffers, largest first, until `enough()` or nothing more can go. */
  private async makeRoom(session: ResidentSession, enough: () => boolean): Promise<void> {
    if (enough()) return;
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
      if (enough()) return;
      if (owner.busy) continue; // It started a batch meanwhile: its buffers stay.
      const paging = this.memory.pageOut(lease);
      this.inFlight.set(lease, paging);
      const result = await paging.finally(() => this.inFlight.delete(lease));
      if (!result.ok && !/COPY_SRC|freed|released/.test(result.message)) this.log(`salus: ${owner.jobId}: page-out skipped: ${result.message}`);
    }
  }
}
