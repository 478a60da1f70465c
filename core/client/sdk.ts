/**
 * The job SDK: what a job may tell the service beyond plain WebGPU. Under
 * `salus run` it is `globalThis.salus` (installed by ./preload.ts). Outside the
 * service, `salus run --local` included, `globalThis.salus` is undefined, so a
 * job that runs either way reads it optionally and falls back to calling its
 * step itself: `globalThis.salus?.iteration ?? ((fn) => fn())`.
 */
import type { JobHints } from '../protocol/state.js';
import type { ServiceConnection } from './connection.js';

/** What `globalThis.salus` offers a job under `salus run`. */
export interface SalusSdk {
  /** The service's id for this job (`job-3`), or null when the service's welcome named none. */
  readonly jobId: string | null;
  /**
   * Runs `fn` as one iteration: the service waits for this job's turn in its lane
   * before replaying the iteration's GPU work, and counts the iteration done once
   * that work finishes. Resolves with what `fn` returns as soon as the iteration's
   * end is sent (the service ends iterations in order): the service's answer costs
   * the job no round trip of its own. A call waits for the answer to the end of the
   * iteration before the last one, so a job that never waits on the GPU runs at
   * most two iterations ahead of the service; one that does (a readback, a
   * popErrorScope) has had that answer before it asks.
   */
  iteration<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Declares or updates hints (total iterations, memory, priority). */
  setHints(hints: JobHints): void;
}

/** The SDK over a service connection. */
export function createSdk(connection: ServiceConnection, jobId: string | null): SalusSdk {
  /** The service's answers to the ends of the last two iterations (settled, never rejected). */
  let endedBeforeLast: Promise<unknown> = Promise.resolve();
  let lastEnded: Promise<unknown> = Promise.resolve();
  return {
    jobId,
    async iteration<T>(fn: () => T | Promise<T>): Promise<T> {
      await endedBeforeLast;
      connection.record({ op: 'iterationBegin' });
      connection.flush();
      try {
        return await fn();
      } finally {
        // Sent now: work the job does before its next iteration must not keep the lane from others.
        const rid = connection.allocateRid();
        endedBeforeLast = lastEnded;
        lastEnded = connection.expectReply(rid).catch(() => undefined);
        connection.record({ op: 'iterationEnd', rid });
        connection.flush();
      }
    },
    setHints(hints: JobHints): void {
      connection.send({ t: 'hints', hints });
    },
  };
}
