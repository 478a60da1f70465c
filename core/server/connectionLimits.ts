/**
 * What one connection may make the service hold (issue 9: every client is
 * untrusted). Two kinds of bound:
 *
 * - Backpressure, for work a well-behaved job may legitimately pile up: past a
 *   soft bound the service stops reading the socket (the job's own writes then
 *   wait in its process) or, for replies, waits before producing more, and
 *   goes on once below it. Nothing fails.
 * - Hard limits, for what only a broken or hostile peer does: the peer gets an
 *   `error` frame saying which limit and what to do, and is dropped; the
 *   service and every other job go on.
 *
 * README "Limits" lists these values; keep the two in step.
 */
import type { Socket } from 'node:net';

const MiB = 1024 * 1024;

/** Bounds per connection (and so per job: a job is one connection). */
export const CONNECTION_LIMITS = {
  /** Batch payload bytes received and not yet replayed past which the socket is not read (soft). */
  pauseQueuedBytes: 64 * MiB,
  /** Commands received and not yet replayed past which the socket is not read (soft). */
  pauseQueuedCommands: 65_536,
  /** Batches received and not yet replayed past which the socket is not read (soft). */
  pauseQueuedBatches: 32,
  /**
   * Reply bytes the peer has not taken yet (the socket's send queue) past which the service
   * stops reading the socket and holds back mapped-range reads until the peer catches up (soft).
   */
  pauseReplyBytes: 64 * MiB,
  /** Reply bytes the peer has not taken past which it is dropped: it does not read what it asked for (hard). */
  maxReplyBytes: 1024 * MiB,
  /** Requests (anything awaiting a reply) in flight at once per job (hard). */
  maxPendingRequests: 65_536,
  /** Live GPU objects a job may hold at once, all its devices together (hard). */
  maxLiveObjects: 1_000_000,
  /** Error scopes a job has pushed and not popped, all its devices together (hard; each costs the service ~100 bytes). */
  maxErrorScopes: 1_000_000,
} as const;

/** What a job holds on the service that its own calls make grow (0 for connections that are not jobs). */
export interface HeldByJob {
  liveObjects: number;
  errorScopes: number;
}

/** What a connection that is not a job holds. */
export const NOTHING_HELD: HeldByJob = Object.freeze({ liveObjects: 0, errorScopes: 0 });

/** How long a dropped peer has to read its error frame before its socket is destroyed (its queued replies freed). */
export const DROP_GRACE_MS = 2_000;

/** Bytes and commands a connection has handed to its session and not yet seen replayed. */
interface QueuedWork {
  bytes: number;
  commands: number;
  batches: number;
}

/** Whether the socket should stop being read, and why not (null) or why (a phrase for the log). */
export function pauseReason(queued: QueuedWork, replyBytes: number): string | null {
  const limits = CONNECTION_LIMITS;
  if (queued.bytes > limits.pauseQueuedBytes) return `${queued.bytes} queued bytes`;
  if (queued.commands > limits.pauseQueuedCommands) return `${queued.commands} queued commands`;
  if (queued.batches >= limits.pauseQueuedBatches) return `${queued.batches} queued batches`;
  if (replyBytes > limits.pauseReplyBytes) return `${replyBytes} reply bytes not read by the peer`;
  return null;
}

/**
 * The hard limit a connection is past, as a message for the peer (what happened
 * and what to do), or null.
 */
export function limitExceeded(pendingRequests: number, replyBytes: number, held: HeldByJob): string | null {
  const limits = CONNECTION_LIMITS;
  if (replyBytes > limits.maxReplyBytes) {
    return `the job left more than ${limits.maxReplyBytes / MiB} MiB of replies unread on its socket; read replies as they come (or ask for less at once)`;
  }
  if (pendingRequests > limits.maxPendingRequests) {
    return `the job has more than ${limits.maxPendingRequests} requests awaiting replies; await some before sending more`;
  }
  if (held.liveObjects > limits.maxLiveObjects) {
    return `the job holds more than ${limits.maxLiveObjects} live GPU objects; destroy or drop the ones it no longer uses`;
  }
  if (held.errorScopes > limits.maxErrorScopes) {
    return `the job has more than ${limits.maxErrorScopes} error scopes pushed and not popped; pop each scope it pushes`;
  }
  return null;
}

/**
 * One connection's flow control: counts what it handed to its session and what
 * awaits replies, pauses and resumes reading the socket, and calls `onLimit`
 * (once) when a hard limit is passed.
 */
export class ConnectionFlow {
  private readonly queued: QueuedWork = { bytes: 0, commands: 0, batches: 0 };
  private pendingRequests = 0;
  private limited = false;

  constructor(
    private readonly socket: Socket,
    /** What the connection's job holds (zeros for others). */
    private readonly held: () => HeldByJob,
    private readonly onLimit: (message: string) => void,
  ) {
    socket.on('drain', () => this.update());
  }

  /**
   * Work handed to the session: `commands` with `payloadBytes`, of which `requests`
   * await a reply; `replayed` settles once the session has replayed it (void: at once).
   */
  track(commands: number, payloadBytes: number, requests: number, replayed: Promise<void> | void): void {
    this.pendingRequests += requests;
    if (!replayed) return this.update();
    this.add(commands, payloadBytes, 1);
    this.update();
    // then(settled, settled), not finally: one promise and one microtask fewer per batch.
    const settled = () => {
      this.add(-commands, -payloadBytes, -1);
      this.update();
    };
    void replayed.then(settled, settled);
  }

  /** A frame went out; `reply` when it answers a request (replies to requests never counted leave the count at zero). */
  sent(reply: boolean): void {
    if (reply) this.pendingRequests = Math.max(0, this.pendingRequests - 1);
    if (this.socket.writableLength > CONNECTION_LIMITS.pauseReplyBytes) this.update();
  }

  /** Null while the peer keeps up with its replies; else resolves once it has caught up. */
  whenWritable(): Promise<void> | null {
    return this.socket.writableLength > CONNECTION_LIMITS.pauseReplyBytes ? whenDrainedBelow(this.socket, CONNECTION_LIMITS.pauseReplyBytes) : null;
  }

  /** Applies the bounds: pauses or resumes reading, or reports a hard limit. */
  update(): void {
    if (this.limited || this.socket.destroyed) return;
    const exceeded = limitExceeded(this.pendingRequests, this.socket.writableLength, this.held());
    if (exceeded) {
      this.limited = true;
      this.onLimit(exceeded);
      return;
    }
    const pause = pauseReason(this.queued, this.socket.writableLength) !== null;
    if (pause && !this.socket.isPaused()) this.socket.pause();
    else if (!pause && this.socket.isPaused()) this.socket.resume();
  }

  private add(commands: number, bytes: number, batches: number): void {
    this.queued.commands += commands;
    this.queued.bytes += bytes;
    this.queued.batches += batches;
  }
}

/** Resolves once `socket`'s send queue is at most `bytes` (or it closed). */
export function whenDrainedBelow(socket: Socket, bytes: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (socket.destroyed || socket.writableLength <= bytes) {
        socket.off('drain', check);
        socket.off('close', check);
        resolve();
      }
    };
    socket.on('drain', check);
    socket.on('close', check);
    check();
  });
}
