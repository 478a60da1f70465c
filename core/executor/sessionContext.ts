/**
 * A session's replay context (replay.ts's ReplayContext): one per session, made once, handed to every handler.
 *
 * A class, so its functions are the same ones for every session: handlers that call `ctx.reply` or
 * `ctx.submitSuffix` are optimised once for the service's life. Closures made per session (as this context's
 * functions were) gave each job's optimised replay code a call target of its own: when the next job came,
 * that code was thrown away ("wrong call target", or "weak objects" once the old session was collected) and
 * the replay path compiled again, at every job.
 */
import type { MemoryManager } from '../memory/memoryManager.js';
import type { DataRef, GpuErrorJson } from '../protocol/commands.js';
import type { BulkReader } from './bulkRead.js';
import type { ObjectTable } from './objects.js';
import { noteAnswer, type ReplayContext, type RequestWatch } from './replay.js';

/** The payload of the context between batches (none: the last batch's bytes are not kept). */
export const NO_PAYLOAD = new Uint8Array(0);

/** What the context asks of its session. */
export interface ContextOwner {
  /** Once true, replies are dropped (the job is gone). */
  readonly isClosed: boolean;
  /** The iteration timer's command buffers to run before the job's in a submit (none outside an iteration). */
  timerBeginCommands(): GPUCommandBuffer[];
  /** The iteration timer's command buffers to run after the job's in a submit (none outside an iteration). */
  timerEndCommands(): GPUCommandBuffer[];
}

/** Where the job's replies go (the session's host). */
export type ReplySink = Pick<ReplayContext, 'reply' | 'replyError'>;

export class SessionContext implements ReplayContext {
  readonly requests: RequestWatch = { rid: 0, answered: false };
  /** The replaying batch's data section (NO_PAYLOAD between batches). */
  payload: Uint8Array = NO_PAYLOAD;
  pipelinesReused = 0;

  constructor(
    readonly jobId: string,
    readonly device: GPUDevice,
    readonly table: ObjectTable,
    readonly memory: MemoryManager,
    private readonly owner: ContextOwner,
    private readonly host: ReplySink,
    private readonly bulk: BulkReader,
  ) {}

  reply(rid: number, result: unknown, payload?: Uint8Array[]): void {
    noteAnswer(this.requests, rid);
    if (!this.owner.isClosed) this.host.reply(rid, result, payload);
  }

  replyError(rid: number, message: string, gpu?: GpuErrorJson): void {
    noteAnswer(this.requests, rid);
    if (!this.owner.isClosed) this.host.replyError(rid, message, gpu);
  }

  /** Bytes the job sent by reference to the bulk channel (core/executor/bulkRead.ts). */
  readBulk(ref: Exclude<DataRef, [number, number]>): Uint8Array {
    return this.bulk.read(ref);
  }

  ring(): Uint8Array | undefined {
    return this.bulk.ring();
  }

  submitPrefix(): GPUCommandBuffer[] {
    return this.owner.timerBeginCommands();
  }

  submitSuffix(): GPUCommandBuffer[] {
    return this.owner.timerEndCommands();
  }
}
