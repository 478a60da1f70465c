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
   * that work finishes. Resolves with what `fn` returns, once the service has
   * ended the iteration (its GPU work done, the lane free for others).
   */
  iteration<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Declares or updates hints (total iterations, memory, priority). */
  setHints(hints: JobHints): void;
}

/** The SDK over a service connection. */
export function createSdk(connection: ServiceConnection, jobId: string | null): SalusSdk {
  return {
    jobId,
    async iteration<T>(fn: () => T | Promise<T>): Promise<T> {
      connection.record({ op: 'iterationBegin' });
      connection.flush();
      try {
        return await fn();
      } finally {
        // Sent now (work the job does before its next iteration must not keep the lane from others),
        // and awaited: iteration() resolves once the service has ended it and the lane is free.
        const rid = connection.allocateRid();
        const done = connection.expectReply(rid);
        connection.record({ op: 'iterationEnd', rid });
        connection.flush();
        await done.catch(() => undefined);
      }
    },
    setHints(hints: JobHints): void {
      connection.send({ t: 'hints', hints });
    },
  };
}
