/**
 * The job SDK: what a job may tell the service beyond plain WebGPU. Under
 * `salus run` it is `globalThis.salus`; outside Salus, `localSdk` keeps the same
 * calls working on a local device, so a job runs either way unchanged.
 */
import type { JobHints } from '../protocol/state.js';
import type { ServiceConnection } from './connection.js';

export interface SalusSdk {
  /** The service's id for this job, or null outside Salus. */
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

/** The SDK outside Salus: iterations just run. */
export const localSdk: SalusSdk = {
  jobId: null,
  async iteration<T>(fn: () => T | Promise<T>): Promise<T> {
    return fn();
  },
  setHints(): void {},
};
