/**
 * A job's session on the shared device: it replays the job's command batches in
 * order, marks its iterations (explicit from the job SDK, or inferred: from the
 * first submit after a sync point to the next sync point, once the GPU work is
 * done), waits for the scheduler's grant before each iteration, and routes every
 * error and reply to this job alone. `close()` destroys everything the job holds.
 *
 * Where an iteration begins, ends and counts is decided by its state machine
 * (core/executor/iteration.ts), which this session feeds the events of each batch;
 * the session does the waiting (for the grant, the GPU, the job's reads).
 */
import type { Command, GpuErrorJson } from '../protocol/commands.js';
import type { DecodedBatch } from '../protocol/commandCodec.js';
import type { MemoryManager } from '../memory/memoryManager.js';
import type { ErrorScopes } from './errorScopes.js';
import { JobDevices } from './jobDevices.js';
import { ObjectTable, type DeviceConfig } from './objects.js';
import { createdKind, replay } from './replay.js';
import { NO_PAYLOAD, SessionContext, type ContextOwner } from './sessionContext.js';
import { SessionRefresh } from './entryRefresh.js';
import {
  OP_BIND_GROUP_SOURCES, OP_DISPATCH, OP_FLAGS, OP_LARGE_REPLY, OP_RELEASE, OP_SESSION, OP_SUBMIT, OP_SYNC, OP_WORKING_SET, lastIndexWith,
} from './opFlags.js';
import { IterationTimer } from './iterationTimer.js';
import { IterationMachine, type IterationSource } from './iteration.js';
import { JobIterationEffects } from './iterationEffects.js';
import { WorkingSetTracker, type WorkingSetStats } from './workingSet.js';
import { BindGroupSources, type ResidentSession } from './residency.js';
import { BulkReader } from './bulkRead.js';
import { pipelinePoolOf } from './pipelinePool.js';

/** What the session needs from the service around it. */
export interface SessionHost {
  /** Resolves when the job may start its next iteration (the scheduler's grant). */
  acquireIteration(): Promise<void>;
  /** Makes room for a batch and makes the job's buffers resident before it replays (core/executor/residency.ts); absent: nothing pages. */
  prepareBatch?(cmds: readonly Command[], codes: readonly number[]): Promise<void> | undefined;
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

/** Malformed commands of one job that reach the service's log; past it one line says the rest are not logged. */
export const MALFORMED_LOG_LIMIT = 10;

export class Session implements ResidentSession, ContextOwner {
  private readonly table = new ObjectTable();
  /** The job's devices, and the one its commands are for now. */
  private readonly devices: JobDevices;
  private queue: Promise<void> = Promise.resolve();
  private queuedBatches = 0;
  private closed = false;
  /** How many malformed commands this job has sent (the first MALFORMED_LOG_LIMIT are logged). */
  private malformedCount = 0;
  private closeSignal!: () => void;
  private readonly closedPromise = new Promise<void>((resolve) => { this.closeSignal = resolve; });
  /** Where the job's iterations stand: the grant, their ends, their memory side. */
  private readonly iteration: IterationMachine;
  private timer: IterationTimer | null | undefined;
  /** While the submit that carries the timer's end stamp replays (see replayCommands). */
  private stampEndHere = false;
  /** Where bytes the job sends by reference are read. */
  private readonly bulk: BulkReader;
  private readonly workingSetTracker = new WorkingSetTracker();
  /** How the job's bind groups were made, so they can be made again on buffers that paged or were discarded. */
  readonly bindGroupSources = new BindGroupSources();
  /** True while a batch is prepared or replayed (not while it waits for a grant): then its buffers never page out. */
  busy = false;
  /** What the replay handlers use: one per session, made once (its `payload` is the replaying batch's data section). */
  private readonly ctx: SessionContext;

  constructor(
    readonly jobId: string,
    private readonly device: GPUDevice,
    private readonly memory: MemoryManager,
    private readonly host: SessionHost,
    /** The bulk channel's folder, where this job may leave large payloads as files. */
    bulkDir: string | null = null,
  ) {
    this.bulk = new BulkReader(bulkDir, jobId);
    this.devices = new JobDevices(device, (error, id) => host.uncaptured(error, id), () => this.workingSetTracker.taint());
    this.iteration = new IterationMachine(new JobIterationEffects(jobId, memory, host));
    this.ctx = new SessionContext(jobId, device, this.table, memory, this, host, this.bulk);
    // Discarded buffers come back, and bind groups on moved buffers are made again, when the job next uses them.
    this.table.refresh = new SessionRefresh({ jobId, device, table: this.table, memory }, this.bindGroupSources);
  }

  /** The error scopes of the device the job's commands are for now. */
  private get scopes(): ErrorScopes {
    return this.devices.current.scopes;
  }

  /** How many devices the job holds (created and not destroyed). */
  get deviceCount(): number {
    return this.devices.count;
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
    return { liveObjects: this.table.size, errorScopes: this.devices.scopeDepth };
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
    return this.iteration.running;
  }

  /** `sdk` once the job marks an iteration itself; inferred until then. */
  get iterationSource(): IterationSource {
    return this.iteration.source;
  }

  /**
   * Queues a batch for replay (decoded and checked on arrival, while earlier batches may
   * still wait for the GPU); batches of one session replay strictly in order. `payload` is its data section.
   */
  enqueue(batch: DecodedBatch, payload: Uint8Array): Promise<void> {
    // With nothing queued the batch starts now, not a promise hop later: an awaited call's reply goes out sooner.
    const idle = this.queuedBatches === 0;
    this.queuedBatches++;
    const started = idle ? this.replayBatch(batch, payload) : this.queue.then(() => this.replayBatch(batch, payload));
    const run = started.catch((error: Error) => {
      this.host.log(`internal error while replaying a batch: ${error.stack ?? error.message}`);
      this.host.uncaptured({ type: 'internal', message: `Salus service: ${error.message}` }, this.devices.current.id);
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
    this.iteration.settle(performance.now());
  }

  /** Destroys every object of the job and returns its memory; safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.closeSignal();
    // Its pipelines stay compiled for later jobs (pipelinePool.ts).
    const pipelines = pipelinePoolOf(this.device);
    for (const entry of this.table.values()) {
      if (entry.kind === 'querySet' && !entry.lease) entry.obj.destroy();
      if (entry.kind === 'buffer' && !entry.lease && !entry.destroyed && !entry.discarded) entry.obj.destroy();
      pipelines.retainEntry(entry);
    }
    if (this.ctx.pipelinesReused > 0) this.host.log(`${this.ctx.pipelinesReused} of its pipelines came compiled, kept from ended jobs or destroyed devices`);
    this.table.clear();
    this.timer?.destroy();
    this.bulk.close();
    this.iteration.close();
    this.memory.release(this.jobId);
  }

  private async replayBatch({ cmds, codes, malformed }: DecodedBatch, payload: Uint8Array): Promise<void> {
    if (this.closed) return;
    this.reportMalformed(malformed);
    if (this.iteration.batchNeedsGrant(lastIndexWith(codes, OP_SUBMIT) >= 0) && !(await this.beginIteration())) return;
    this.busy = true;
    try {
      const preparing = this.host.prepareBatch?.(cmds, codes);
      if (preparing) await preparing;
      this.ctx.payload = payload;
      await this.replayCommands(cmds, codes);
    } finally {
      this.ctx.payload = NO_PAYLOAD;
      this.busy = false;
      this.host.releaseBatch?.();
    }
  }

  private async replayCommands(cmds: Command[], codes: number[]): Promise<void> {
    const ctx = this.ctx;
    this.scopes.openSegment();
    const iteration = this.iteration;
    iteration.startBatch();
    // Where the timer may mark an iteration's end early: at the batch's last sync point, if no submit follows.
    const lastSync = lastIndexWith(codes, OP_SYNC);
    const lastSubmit = lastIndexWith(codes, OP_SUBMIT);
    const markAt = lastSync > lastSubmit ? lastSync : -1;
    // The submit that sync point follows carries the timer's end stamp, so reading it back takes no submit of its own.
    const stampEndAt = markAt >= 0 ? lastSubmit : -1;
    for (let index = 0; index < cmds.length; index++) {
      const cmd = cmds[index];
      const code = codes[index];
      const flags = OP_FLAGS[code];
      if (this.closed) return;
      if ((flags & OP_SUBMIT) && iteration.submitNeedsGrant()) {
        // Marking one iteration must not let the rest of a job's GPU work run unscheduled: this grant ends with the batch.
        this.scopes.closeSegment();
        if (!(await this.beginIteration(true))) return;
        this.scopes.openSegment();
      }
      if (flags & OP_LARGE_REPLY) {
        // Large replies: produced only as fast as the job reads them, so a batch of them cannot pile up in the service.
        const writable = this.host.whenWritable?.();
        if (writable) {
          this.scopes.closeSegment();
          await writable;
          if (this.closed) return;
          this.scopes.openSegment();
        }
      }
      if (!(flags & OP_RELEASE)) iteration.nonRelease();
      // Read the iteration's time back alongside the job's own wait at its last sync point, so the next iteration
      // never waits for it (a marked iteration may submit again after it, and the timer then reads again).
      if ((flags & OP_SYNC) && iteration.syncPoint() && index === markAt) this.timer?.markEnd();
      if (flags & OP_SESSION) {
        if (!(await this.runSessionCommand(cmd, code, { cmds, codes }, index))) return;
        continue;
      }
      this.stampEndHere = index === stampEndAt;
      const error = replay(ctx, cmd, code);
      this.stampEndHere = false;
      if (error) this.scopes.report(error);
      if (flags & OP_WORKING_SET) this.workingSetTracker.observe(cmd, code, this.table, error === null);
      if (flags & OP_BIND_GROUP_SOURCES) this.bindGroupSources.observe(cmd, this.table, error === null);
      if (flags & OP_SUBMIT) {
        iteration.submitted();
        this.timer?.reopen();
      }
      if (flags & OP_DISPATCH) iteration.dispatched();
    }
    this.scopes.closeSegment();
    // A batch of releases alone (e.g. objects the job's GC let go of) does not end the memory side:
    // the job's own frees of this iteration's buffers may still come.
    if (iteration.batchEnds()) await this.endIteration();
  }

  /**
   * Runs one of the commands the session handles itself (OP_SESSION): iteration marks, devices, error scopes.
   * False when the batch must stop (the session closed, or the grant was refused).
   */
  private async runSessionCommand(cmd: Command, code: number, batch: { cmds: readonly Command[]; codes: readonly number[] }, index: number): Promise<boolean> {
    const iteration = this.iteration;
    switch (cmd.op) {
      case 'iterationBegin':
        this.scopes.closeSegment();
        if (iteration.endsBeforeMarkedBegin()) await this.endIteration();
        iteration.markedBegin();
        if (!iteration.running && !(await this.waitForGrant(batch.cmds.slice(index), batch.codes.slice(index)))) return false;
        this.scopes.openSegment();
        return true;
      case 'iterationEnd':
        this.scopes.closeSegment();
        if (iteration.running) await this.endIteration();
        if (cmd.rid !== undefined) this.host.reply(cmd.rid, {});
        this.scopes.openSegment();
        return true;
      case 'configureDevice':
        this.switchDevice(cmd.device ?? 1, { features: new Set(cmd.features), limits: cmd.limits });
        return true;
      case 'useDevice':
        this.switchDevice(cmd.device, null);
        return true;
      case 'destroyDevice':
        replay(this.ctx, cmd, code);
        this.devices.forgetCurrent();
        return true;
      case 'pushErrorScope':
        this.scopes.closeSegment();
        this.scopes.push(cmd.filter);
        this.scopes.openSegment();
        return true;
      case 'popErrorScope':
        this.scopes.closeSegment();
        try {
          this.host.reply(cmd.rid, this.scopes.pop());
        } catch (error) {
          this.host.replyError(cmd.rid, (error as Error).message);
        }
        this.scopes.openSegment();
        return true;
      default:
        throw new Error(`${cmd.op} is not a command the session runs itself`);
    }
  }

  /** Makes device `id` the one the job's commands are for (see JobDevices.switchTo); the object table follows it. */
  private switchDevice(id: number, config: DeviceConfig | null): void {
    if (!this.devices.switchTo(id, config)) return;
    this.table.deviceId = id;
    this.table.device = this.devices.current.config;
  }

  /**
   * Ends now the memory side of an iteration whose scheduling side ended (normally it ends at the job's next
   * non-release command), so that what it still holds counts as persistent and may page out. Only between batches.
   */
  settleMemory(): void {
    if (!this.busy) this.iteration.settleMemory();
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
      this.host.uncaptured({ type: 'validation', message }, this.devices.current.id);
      const kind = op === undefined ? undefined : createdKind(op);
      if (id !== undefined && kind !== undefined && !this.table.has(id)) this.table.invalidate(id, kind, message);
      if (rid !== undefined) this.host.replyError(rid, message);
    }
  }

  /** The iteration timer's start, for the context's submitPrefix (ContextOwner). */
  timerBeginCommands(): GPUCommandBuffer[] {
    return this.iteration.running && this.timer ? this.timer.takeBeginCommands() : [];
  }

  /** The iteration timer's end, for the context's submitSuffix (ContextOwner). */
  timerEndCommands(): GPUCommandBuffer[] {
    return this.iteration.running && this.timer ? this.timer.takeEndCommands(this.stampEndHere) : [];
  }

  /** Waits for the grant mid-batch, not busy meanwhile (its buffers may page out), then makes the rest of the batch resident again. */
  private async waitForGrant(rest: readonly Command[], restCodes: readonly number[]): Promise<boolean> {
    this.busy = false;
    this.host.releaseBatch?.();
    const granted = await this.beginIteration();
    this.busy = true;
    const preparing = granted ? this.host.prepareBatch?.(rest, restCodes) : undefined;
    if (preparing) await preparing;
    return granted && !this.closed;
  }

  /** Waits for the grant (`unmarked`: for an SDK job's work outside its iterations); false when it was refused or the session closed meanwhile. */
  private async beginIteration(unmarked = false): Promise<boolean> {
    this.iteration.grantRequested();
    const granted = this.host.acquireIteration().then(() => true, () => false);
    const ok = await Promise.race([granted, this.closedPromise.then(() => false)]);
    if (!ok || this.closed) {
      this.iteration.grantRefused();
      return false;
    }
    this.iteration.granted(performance.now(), unmarked);
    this.workingSetTracker.beginWindow();
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
    this.iteration.endRequested();
    const measured = this.timer ? this.timer.end() : this.device.queue.onSubmittedWorkDone().then(() => null);
    const gpuMs = await Promise.race([measured, this.closedPromise.then(() => null)]);
    this.iteration.gpuDone(gpuMs, performance.now());
  }
}
