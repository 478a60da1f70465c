/**
 * Runs the OS tool that lists sockets or pipes (`ss`, `lsof`, PowerShell) for
 * every connection waiting to be identified, one run at a time: a burst of
 * connections costs one or two runs, not one process each (a client must not be
 * able to make the service fork at will). Each caller gets a listing started
 * after it asked, so its own connection is in it.
 */
import { execFile } from 'node:child_process';
import type { Socket } from 'node:net';

/** How long a listing may take before the peer counts as unverifiable. */
export const LISTING_TIMEOUT_MS = 5000;
/** Largest listing read (a machine with very many sockets). */
const LISTING_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** One run's output, and how many callers it answered (connections identified from the same listing). */
export interface Listing {
  output: string;
  callers: number;
}

/** A function that resolves with a run of `command args`, or null when it failed, is missing or took past `timeoutMs`. */
export function batchedListing(command: string, args: () => string[], timeoutMs = LISTING_TIMEOUT_MS): () => Promise<Listing | null> {
  let waiting: Array<(listing: Listing | null) => void> = [];
  let running = false;
  const runForWaiting = (): void => {
    if (running || waiting.length === 0) return;
    running = true;
    const batch = waiting;
    waiting = [];
    execFile(command, args(), { timeout: timeoutMs, maxBuffer: LISTING_MAX_OUTPUT_BYTES, windowsHide: true }, (error, stdout) => {
      for (const resolve of batch) resolve(error ? null : { output: stdout, callers: batch.length });
      running = false;
      runForWaiting();
    });
  };
  return () => new Promise((resolve) => {
    waiting.push(resolve);
    runForWaiting();
  });
}

/** libuv's descriptor of a connection in this process (not a public API; absent on Windows), or null. */
export function socketFd(socket: Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/** `parse`, remembering its last answer: a batch's callers parse the same listing once. */
export function parsedOnce<T>(parse: (listing: string) => T): (listing: string) => T {
  let last: { listing: string; parsed: T } | null = null;
  return (listing) => {
    if (last?.listing !== listing) last = { listing, parsed: parse(listing) };
    return last.parsed;
  };
}
