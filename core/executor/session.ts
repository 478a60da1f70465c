/**
 * A job's session on the shared device: it replays the job's command batches in
 * order, marks its iterations (explicit from the job SDK, or inferred: from the
 * first submit after a sync point to the next sync point, once the GPU work is
 * done), waits for the scheduler's grant before each iteration, and routes every
 * error and reply to this job alone. `close()` destroys everything the job holds.
 *
 * Past 450 lines until its iteration state (the flags a batch sets and the
 * grant, timer and sync-point logic that reads them) becomes one explicit state
 * machine in a file of its own: the next step of this folder's reshaping.
 */
import type { Command, DataRef, GpuErrorJson } from '../protocol/commands.js';
import type { DecodedBatch } from '../protocol/commandCodec.js';
import type { MemoryManager } from '../memory/memoryManager.js';
import { ErrorScopes } from './errorScopes.js';
import { ObjectTable, type BufferEntry, type DeviceConfig } from './objects.js';
import { reviveBuffer } from './discard.js';
import { createdKind, replay, type ReplayContext } from './replay.js';
import { IterationTimer } from './iterationTimer.js';
import { WorkingSetTracker, type WorkingSetStats } from './workingSet.js';
import { BindGroupSources, type ResidentSession } from './residency.js';
import { ReplayError } from './objects.js';
import { openBulkFile, readBulkBytes, removeBulkFiles, scratchFileName, takeBulkFile } from '../platform/bulkDir.js';
import { closeSync } from 'node:fs';
import { join } from 'node:path';

/** What the session needs from the service around it. */
export interface SessionHost {
  /** Resolves when the job may start its next iteration (the scheduler's grant). */
  acquireIteration(): Promise<void>;
  /** Makes room for a batch and makes the job's buffers resident before it replays (core/executor/residency.ts); absent: nothing pages. */
  prepareBatch?(cmds: readonly Command[]): Promise<void> | undefined;
  /** The batch prepared last ended or waits for a grant: room held for it goes back. */
  releaseBatch?(): void;
  /** The iteration's GPU work is done after `elapsedMs` (grant to completion). */
  /** `counted` is false for an SDK job's work outside its marked iterations (scheduled, but not an iteration). */
  finishIteration(elapsedMs: number, counted: boolean): void;
  /** A reply for the job (`rid`), with optional bytes. */
  reply(rid: number, result: unknown, payload?: Uint8Array[]): void;
  replyError(rid: number, message: string, gpu?: GpuErrorJson): void;
  /** An error no scope of the job's device `deviceId` captured. */
  uncaptured(error: GpuErrorJson, deviceId: number): void;
  /** A line for the service log, about this job. */
  log(message: string): void;
  /** Null while the job keeps up with its replies; else resolves once it has read enough of them. */
  whenWritable?(): Promise<void> | null;
}

/** One of the job's devices: its own error scopes and its own features and limits. */
interface JobDevice {
  id: number;
  scopes: ErrorScopes;
  config: DeviceConfig | null;
}

/** Devices a job may hold at once (each costs the service little, but not nothing). */
export const MAX_DEVICES_PER_JOB = 1024;

/** Commands that only let go of things: they still belong to the iteration before them. */
const RELEASE_OPS = new Set<Command['op']>(['destroy', 'unmap', 'setLabel', 'release', 'discard', 'readMapped', 'writeMapped']);

/** Commands after which an inferred iteration ends (the job waits on the GPU there). */
const SYNC_OPS = new Set<Command['op']>(['mapAsync', 'workDone', 'popErrorScope']);
const SUBMIT_OPS = new Set<Command['op']>(['submit']);

/** The index of the last command of `cmds` whose op is in `ops` (-1: none); scans from the end, where they usually are. */
function lastIndexOf(cmds: readonly Command[], ops: ReadonlySet<Command['op']>): number {
  for (let i = cmds.length - 1; i >= 0; i--) if (ops.has(cmds[i].op)) return i;
  return -1;
}

/** Malformed commands of one job that reach the service's log; past it one line says the rest are not logged. */
export const MALFORMED_LOG_LIMIT = 10;

export class Session implements ResidentSession {
  private readonly table = new ObjectTable();
  /** The job's live devices by id (a destroyed one leaves), and the one its commands are for now. */
  private readonly devices = new Map<number, JobDevice>();
  private current: JobDevice;
  private queue: Promise<void> = Promise.resolve();
  private queuedBatches = 0;
  private closed = false;
  /** False while the grant in progress is an SDK job's unmarked work, which is scheduled but is not an iteration. */
  private grantIsIteration = true;
  /** How many malformed commands this job has sent (the first MALFORMED_LOG_LIMIT are logged). */
  private malformedCount = 0;
  private closeSignal!: () => void;
  private readonly closedPromise = new Promise<void>((resolve) => { this.closeSignal = resolve; });
  private inIteration = false;
  /** The iteration reached its end and waits for its GPU work (and time reading). */
  private ending = false;
  /**
   * Inferred iterations end (for scheduling) at the sync point, but a job frees
   * that iteration's buffers only after it has read its results, in its next
   * batch. So the memory side of the iteration ends lazily: at the first command
   * of a later batch that is not a release (destroy, unmap, label).
   */
  private memoryIterationOpen = false;
  /** A granted iteration whose memory side starts at the job's next non-release command. */
  private memoryBeginPending = false;
  private submittedInIteration = false;
  /** A dispatch replayed since the last sync point; an inferred iteration counts only if it synced after one (not a readback alone). */
  private dispatchedSinceSync = false;
  private syncedAfterDispatch = false;
  private iterationStartMs = 0;
  private timer: IterationTimer | null | undefined;
  /** The job's scratch file in the bulk folder, opened at its first use. */
  private scratchFd: number | null = null;
  private readonly workingSetTracker = new WorkingSetTracker();
  /** How the job's bind groups were made, so they can be made again on buffers that paged or were discarded. */
  readonly bindGroupSources = new BindGroupSources();
  /** True while a batch is prepared or replayed (not while it waits for a grant): then its buffers never page out. */
  busy = false;
  /** `sdk` once the job marks an iteration itself; inferred until then. */
  iterationSource: 'sdk' | 'inferred' = 'inferred';

  constructor(
    readonly jobId: string,
    private readonly device: GPUDevice,
    private readonly memory: MemoryManager,
    private readonly host: SessionHost,
    /** The bulk channel's folder, where this job may leave large payloads as files. */
    private readonly bulkDir: string | null = null,
  ) {
    this.current = this.addDevice(1);
    // Discarded buffers come back, and bind groups on moved buffers are made again, when the job next uses them.
    const revive = (entry: BufferEntry) => reviveBuffer({ jobId, device, table: this.table, memory }, entry);
    this.table.refresh = {
      buffer: revive,
      bindGroup: (id, group) => this.bindGroupSources.refresh(id, group, device, revive),
    };
  }

  /** The error scopes of the device the job's commands are for now. */
  private get scopes(): ErrorScopes {
    return this.current.scopes;
  }

  /** How many devices the job holds (created and not destroyed). */
  get deviceCount(): number {
    return this.devices.size;
  }

  /** Batches received and not yet replayed (for backpressure on the socket). */
  get backlog(): number {
    return this.queuedBatches;
  }

  /** The job's buffers its last finished iteration touched, and which of them it needed from before (null before one finished). */
  get workingSet(): WorkingSetStats | null {
    return this.workingSetTracker.last;
  }

  /** What the job holds that its calls make grow, all its devices together (for the service's limits). */
  get held(): { liveObjects: number; errorScopes: number } {
    let errorScopes = 0;
    for (const device of this.devices.values()) errorScopes += device.scopes.depth;
    return { liveObjects: this.table.size, errorScopes };
  }

  /** Whether close() ran. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Set by residency once the log said the job waited for room. */
  warnedWaiting = false;

  /** The job's objects (for residency: its buffers, encoders and bind groups). */
  get objects(): ObjectTable {
    return this.table;
  }

  /** Whether an iteration of this job holds its lane now. */
  get running(): boolean {
    return this.inIteration;
  }

  /**
   * Queues a batch for replay (decoded and checked on arrival, while earlier batches may
   * still wait for the GPU); batches of one session replay strictly in order. `payload` is its data section.
   */
  enqueue(batch: DecodedBatch, payload: Uint8Array): Promise<void> {
    this.queuedBatches++;
    const run = this.queue.then(() => this.replayBatch(batch, payload)).catch((error: Error) => {
      this.host.log(`internal error while replaying a batch: ${error.stack ?? error.message}`);
      this.host.uncaptured({ type: 'internal', message: `Salus service: ${error.message}` }, this.current.id);
    }).finally(() => { this.queuedBatches--; });
    this.queue = run;
    return run;
  }

  /**
   * Counts an iteration that reached its end (the job already waited on its results)
   * but whose GPU-time reading has not come back, e.g. because the job is exiting.
   * Call before reading the job's final numbers.
   */
  settleIteration(): void {
    if (!this.ending || !this.inIteration || this.closed) return;
    this.inIteration = false;
    this.host.finishIteration(performance.now() - this.iterationStartMs, this.takeGrantIsIteration());
  }

  /** Whether the grant now ending is one of the job's iterations; the next grant is, unless said otherwise. */
  private takeGrantIsIteration(): boolean {
    const counted = this.grantIsIteration && (this.iterationSource === 'sdk' || this.syncedAfterDispatch);
    this.grantIsIteration = true;
    this.syncedAfterDispatch = false;
    return counted;
  }

  /** Destroys every object of the job and returns its memory; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closeSignal();
    for (const entry of this.table.values()) {
      if (entry.kind === 'querySet' && !entry.lease) entry.obj.destroy();
      if (entry.kind === 'buffer' && !entry.lease && !entry.destroyed && !entry.discarded) entry.obj.destroy();
    }
    this.table.clear();
    this.timer?.destroy();
    if (this.scratchFd !== null) closeSync(this.scratchFd);
    this.scratchFd = null;
    if (this.bulkDir) removeBulkFiles(this.bulkDir, this.jobId);
    if (this.memoryIterationOpen) {
      this.inIteration = false;
      this.endMemoryIteration();
    }
    this.memory.release(this.jobId);
  }

  private async replayBatch({ cmds, malformed }: DecodedBatch, payload: Uint8Array): Promise<void> {
    if (this.closed) return;
    this.reportMalformed(malformed);
    if (this.iterationSource === 'inferred' && !this.inIteration && lastIndexOf(cmds, SUBMIT_OPS) >= 0) {
      if (!(await this.beginIteration())) return;
    }
    this.busy = true;
    try {
      const preparing = this.host.prepareBatch?.(cmds);
      if (preparing) await preparing;
      await this.replayCommands(cmds, payload);
    } finally {
      this.busy = false;
      this.host.releaseBatch?.();
    }
  }

  private async replayCommands(cmds: Command[], payload: Uint8Array): Promise<void> {
    const ctx = this.context(payload);
    this.scopes.openSegment();
    let endAfterBatch = false;
    // Where the timer may mark an iteration's end early: at the batch's last sync point, if no submit follows.
    const lastSync = lastIndexOf(cmds, SYNC_OPS);
    const markAt = lastSync > lastIndexOf(cmds, SUBMIT_OPS) ? lastSync : -1;
    /** An SDK job's submit outside its marked iterations: granted as an iteration of its own, which ends with the batch. */
    let unmarked = false;
    for (let index = 0; index < cmds.length; index++) {
      const cmd = cmds[index];
      if (this.closed) return;
      if (cmd.op === 'submit' && !this.inIteration && this.iterationSource === 'sdk') {
        // Marking one iteration must not let the rest of a job's GPU work run unscheduled.
        this.scopes.closeSegment();
        if (!(await this.beginIteration())) return;
        unmarked = true;
        this.grantIsIteration = false;
        this.scopes.openSegment();
      }
      if (cmd.op === 'readMapped' || cmd.op === 'mapAsync') {
        // Large replies: produced only as fast as the job reads them, so a batch of them cannot pile up in the service.
        const writable = this.host.whenWritable?.();
        if (writable) {
          this.scopes.closeSegment();
          await writable;
          if (this.closed) return;
          this.scopes.openSegment();
        }
      }
      if (!RELEASE_OPS.has(cmd.op)) this.syncMemoryIteration();
      if (SYNC_OPS.has(cmd.op) && this.iterationSource === 'inferred' && this.inIteration && this.submittedInIteration) {
        endAfterBatch = true;
        this.syncedAfterDispatch ||= this.dispatchedSinceSync;
        this.dispatchedSinceSync = false;
        // Read the iteration's time back alongside the job's own wait, so the next iteration never waits for it.
        if (index === markAt) this.timer?.markEnd();
      } else if (index === markAt && this.inIteration && this.submittedInIteration) {
        // A marked iteration may submit again after this sync point (the timer then reads again), but seldom does:
        // reading now lets iterationEnd answer without another trip through the GPU.
        this.timer?.markEnd();
      }
      switch (cmd.op) {
        case 'iterationBegin':
          this.scopes.closeSegment();
          if ((this.iterationSource === 'inferred' || unmarked) && this.inIteration) await this.endIteration();
          unmarked = false;
          this.iterationSource = 'sdk';
          if (!this.inIteration && !(await this.waitForGrant(cmds.slice(index)))) return;
          this.scopes.openSegment();
          continue;
        case 'iterationEnd':
          this.scopes.closeSegment();
          if (this.inIteration) await this.endIteration();
          if (cmd.rid !== undefined) this.host.reply(cmd.rid, {});
          this.scopes.openSegment();
          continue;
        case 'configureDevice':
          this.switchDevice(cmd.device ?? 1, { features: new Set(cmd.features), limits: cmd.limits });
          continue;
        case 'useDevice':
          this.switchDevice(cmd.device, null);
          continue;
        case 'destroyDevice':
          this.scopes.willReplay();
          replay(ctx, cmd);
          // Its scopes stay current until the next device is named: nothing more comes for this one.
          this.devices.delete(this.current.id);
          continue;
        case 'pushErrorScope':
          this.scopes.closeSegment();
          this.scopes.push(cmd.filter);
          this.scopes.openSegment();
          continue;
        case 'popErrorScope': {
          this.scopes.closeSegment();
          const rid = cmd.rid;
          this.scopes.pop().then(
            (error) => this.host.reply(rid, error),
            (error: Error) => this.host.replyError(rid, error.message),
          );
          this.scopes.openSegment();
          break;
        }
        default: {
          this.scopes.willReplay();
          const error = replay(ctx, cmd);
          if (error) this.scopes.report(error);
          this.workingSetTracker.observe(cmd, this.table, error === null);
          this.bindGroupSources.observe(cmd, this.table, error === null);
          if (cmd.op === 'submit') {
            this.submittedInIteration = true;
            this.timer?.reopen();
          }
          if (cmd.op === 'dispatch' || cmd.op === 'dispatchIndirect') this.dispatchedSinceSync = true;
        }
      }
    }
    this.scopes.closeSegment();
    // A batch of releases alone (e.g. objects the job's GC let go of) does not end the memory side:
    // the job's own frees of this iteration's buffers may still come.
    if (endAfterBatch || (unmarked && this.inIteration)) await this.endIteration();
  }

  private addDevice(id: number): JobDevice {
    const scopes = new ErrorScopes(this.device, (error) => this.host.uncaptured(error, id), () => this.workingSetTracker.taint());
    const device: JobDevice = { id, scopes, config: null };
    this.devices.set(id, device);
    return device;
  }

  /**
   * Makes device `id` the one the job's commands are for: a new device when
   * `config` is given (its `configureDevice`), else one the job already has.
   * The open error-scope segment belongs to the device before, so it closes first.
   */
  private switchDevice(id: number, config: DeviceConfig | null): void {
    let next = this.devices.get(id);
    if (!next && !config) {
      this.scopes.report({ type: 'validation', message: `useDevice: the job has no device ${id} (never created, or destroyed)` });
      return;
    }
    if (!next && this.devices.size >= MAX_DEVICES_PER_JOB) {
      this.scopes.report({ type: 'validation', message: `configureDevice: a job may hold at most ${MAX_DEVICES_PER_JOB} devices at once; destroy the ones it no longer uses` });
      return;
    }
    if (next !== this.current) {
      this.scopes.closeSegment();
      next ??= this.addDevice(id);
      this.current = next;
      this.scopes.openSegment();
    }
    if (config) this.current.config = config;
    this.table.deviceId = id;
    this.table.device = this.current.config;
  }

  /** Reads one of this job's bulk files (then removed; only the job's own names are accepted), or bytes of its scratch file. */
  private readBulk(ref: Exclude<DataRef, [number, number]>): Uint8Array {
    if (!this.bulkDir) throw new ReplayError('this service has no bulk channel; send the bytes in the frame');
    if ('scratch' in ref) {
      try {
        this.scratchFd ??= openBulkFile(join(this.bulkDir, scratchFileName(this.jobId)));
        return readBulkBytes(this.scratchFd, ref.length, ref.scratch);
      } catch (error) {
        throw new ReplayError(`the job's scratch file cannot be read at [${ref.scratch}, ${ref.scratch + ref.length}): ${(error as Error).message}`);
      }
    }
    const { file, length } = ref;
    if (!file.startsWith(`${this.jobId}-`)) throw new ReplayError(`bulk file '${file}' does not belong to ${this.jobId}`);
    try {
      return takeBulkFile(join(this.bulkDir, file), length);
    } catch (error) {
      throw new ReplayError(`bulk file '${file}' cannot be read: ${(error as Error).message}`);
    }
  }

  /**
   * Ends now the memory side of an iteration whose scheduling side ended (normally it ends at the job's next
   * non-release command), so that what it still holds counts as persistent and may page out. Only between batches.
   */
  settleMemory(): void {
    if (!this.busy && !this.closed && this.memoryIterationOpen && !this.inIteration && !this.memoryBeginPending) this.endMemoryIteration();
  }

  private endMemoryIteration(): void {
    this.memoryIterationOpen = false;
    this.memory.endIteration(this.jobId);
  }

  /**
   * Brings the memory side of iterations in line with the scheduling side, at the
   * first command that is not a release: the previous iteration's memory ends
   * (after the job freed what it used), and a granted iteration's begins.
   */
  private syncMemoryIteration(): void {
    if (this.memoryIterationOpen && (this.memoryBeginPending || !this.inIteration)) this.endMemoryIteration();
    if (this.memoryBeginPending) {
      this.memoryBeginPending = false;
      this.memory.beginIteration(this.jobId);
      this.memoryIterationOpen = true;
    }
  }

  /**
   * Reports a batch's malformed commands, in its turn: each is a validation error for the job, and
   * the object a malformed creating command would have made is invalid (so its uses say why). The id
   * of any other command names an existing object (a writeBuffer's buffer) and is left alone.
   */
  private reportMalformed(malformed: DecodedBatch['malformed']): void {
    for (const { message, op, id, rid } of malformed) {
      this.malformedCount++;
      if (this.malformedCount <= MALFORMED_LOG_LIMIT) this.host.log(message);
      else if (this.malformedCount === MALFORMED_LOG_LIMIT + 1) {
        this.host.log(`more malformed commands follow; only the first ${MALFORMED_LOG_LIMIT} are logged (each is still a validation error for the job)`);
      }
      this.host.uncaptured({ type: 'validation', message }, this.current.id);
      const kind = op === undefined ? undefined : createdKind(op);
      if (id !== undefined && kind !== undefined && !this.table.has(id)) this.table.invalidate(id, kind, message);
      if (rid !== undefined) this.host.replyError(rid, message);
    }
  }

  private context(payload: Uint8Array): ReplayContext {
    return {
      jobId: this.jobId,
      device: this.device,
      table: this.table,
      memory: this.memory,
      payload,
      reply: (rid, result, bytes) => { if (!this.closed) this.host.reply(rid, result, bytes); },
      replyError: (rid, message, gpu) => { if (!this.closed) this.host.replyError(rid, message, gpu); },
      readBulk: (ref) => this.readBulk(ref),
      submitPrefix: () => (this.inIteration && this.timer ? this.timer.takeBeginCommands() : []),
    };
  }

  /** Waits for the grant mid-batch, not busy meanwhile (its buffers may page out), then makes the rest of the batch resident again. */
  private async waitForGrant(rest: readonly Command[]): Promise<boolean> {
    this.busy = false;
    this.host.releaseBatch?.();
    const granted = await this.beginIteration();
    this.busy = true;
    const preparing = granted ? this.host.prepareBatch?.(rest) : undefined;
    if (preparing) await preparing;
    return granted && !this.closed;
  }

  /** Waits for the grant; false when the session closed meanwhile. */
  private async beginIteration(): Promise<boolean> {
    const granted = this.host.acquireIteration().then(() => true, () => false);
    const ok = await Promise.race([granted, this.closedPromise.then(() => false)]);
    if (!ok || this.closed) return false;
    this.memoryBeginPending = true;
    this.inIteration = true;
    this.workingSetTracker.beginWindow();
    this.submittedInIteration = false;
    this.iterationStartMs = performance.now();
    if (this.timer === undefined) this.timer = IterationTimer.create(this.device);
    this.timer?.begin();
    return true;
  }

  /**
   * Waits for the iteration's GPU work, then returns its ephemeral memory and frees
   * the lane. The iteration's time is its GPU span from timestamp queries where the
   * device has them, else wall time from grant to completion.
   */
  private async endIteration(): Promise<void> {
    this.ending = true;
    const measured = this.timer ? this.timer.end() : this.device.queue.onSubmittedWorkDone().then(() => null);
    const gpuMs = await Promise.race([measured, this.closedPromise.then(() => null)]);
    this.ending = false;
    if (this.closed || !this.inIteration) return;
    this.inIteration = false;
    this.memoryBeginPending = false;
    if (this.iterationSource === 'sdk' && this.memoryIterationOpen) this.endMemoryIteration();
    // A GPU span longer than the wall time cannot be this iteration's (e.g. its first submit failed validation).
    const wallMs = performance.now() - this.iterationStartMs;
    this.host.finishIteration(gpuMs !== null && gpuMs <= wallMs ? gpuMs : wallMs, this.takeGrantIsIteration());
  }
}
