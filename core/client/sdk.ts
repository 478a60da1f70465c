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
   * that work finishes. Resolves with what `fn` returns, as soon as `fn` settles
   * (the service's end of the iteration is not waited for).
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
        // Not awaited: the service ends the iteration (waits for its GPU work, frees the lane) in
        // order, before anything the job sends next, so the job goes on at once, as it would locally.
        // Sent now: work the job does before its next iteration must not keep the lane from others.
        connection.record({ op: 'iterationEnd' });
        connection.flush();
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
