/**
 * How often the service lets dawn.node look for finished GPU work.
 *
 * While any GPU promise is pending (a job's mapAsync or onSubmittedWorkDone, the
 * iteration timer's readback), dawn.node polls its instance on every turn of the
 * event loop: it calls the global `setImmediate` with a new native function each
 * time (dawn's src/dawn/node/binding/AsyncRunner.cpp, "TODO: create once, reuse").
 * So the service's thread spins for as long as the GPU works, on cores a software
 * GPU's threads need, and each of those functions carries a finalizer, so it
 * outlives young-generation collections: in a service replaying an ONNX Runtime
 * server's requests, 83% of the bytes allocated were these polls (a sampled heap
 * profile), and the collections they caused were 12% of its main thread's time.
 *
 * `throttleDawnPolling` wraps the global `setImmediate` so that a native
 * callback without name or parameters, passed without arguments (what dawn.node
 * passes; other callers pass JavaScript functions or, awaiting a turn, a
 * promise's one-parameter resolve) runs at most once per `minIntervalUs` (or a
 * longer interval that grows with the wait, `backoff`); dawn.node
 * schedules its next poll only once the held one has run. The first poll after a
 * quiet spell runs on the next turn as before, so an idle awaited call is not
 * delayed. For the first `spinUs` of a wait a poll that is not due yet waits by
 * turning the event loop (one reused callback of ours); past that the thread
 * sleeps until it is due, leaving the cores to the GPU. Either way sockets are
 * served between polls, and a completion is seen at most about `minIntervalUs`
 * (plus the kernel's timer slack once sleeping) late. Every other `setImmediate`
 * call goes through unchanged.
 *
 * A job that awaits a GPU promise (its onSubmittedWorkDone, mapAsync) should not
 * wait for the throttle, nor for the event loop's next check phase: `pollDawnSoon`
 * runs the held poll as soon as the service's current synchronous work is done
 * (a microtask), so an answer that is ready at once (an idle queue, a finished
 * readback) is written back in the same turn of the event loop.
 */
/** How often polls run: `minIntervalUs` apart, spinning for the first `spinUs` of a wait; see `backoff`. */
export interface PollingOptions {
  minIntervalUs: number;
  spinUs: number;
  /**
   * With a backoff, the interval grows with the wait: a `divisor`-th of the time waited so far, between
   * `minIntervalUs` and `maxIntervalUs`, so a completion is seen at most that fraction of the wait late.
   */
  backoff?: { divisor: number; maxIntervalUs: number };
}

/** The service's settings: polls well under a socket round trip apart; sleeping only in waits longer than a few round trips. */
export const DAWN_POLLING: PollingOptions = { minIntervalUs: 50, spinUs: 500 };

/**
 * On a software GPU (SwiftShader), whose worker threads are the machine's cores: each poll past the spin
 * wakes the service's thread from its sleep, and on a virtual machine those wake-ups (20,000 a second at
 * 50 µs) take cores from the GPU's threads. Submits of 500 small dispatches (the wire bench's W2), three
 * alternations on one 2-vCPU VM: the service's thread switched 77–87 times a submit with polls 50 µs apart
 * and 20–23 times with this backoff, its CPU fell from 5 to 3 ms a submit, and the submit's lower-quartile
 * time from 11.6–12.8 to 9.0–10.1 ms. A completion is seen at most an eighth of the wait late (50 µs until
 * 0.4 ms, 1 ms past 8 ms).
 */
export const SOFTWARE_GPU_POLLING: PollingOptions = { ...DAWN_POLLING, backoff: { divisor: 8, maxIntervalUs: 1000 } };

type Callback = (...args: unknown[]) => void;

/**
 * Whether `fn` looks like dawn.node's poll: a native function without a name or parameters. JavaScript
 * functions are not native, and a promise's resolve function (`setImmediate(resolve)`) takes one parameter.
 */
function isDawnPoll(fn: unknown): boolean {
  return typeof fn === 'function' && fn.length === 0 && fn.name === ''
    && Function.prototype.toString.call(fn).endsWith('{ [native code] }');
}

interface Throttle { restore(): void; pollSoon(): void; idle(): boolean }

let installed: Throttle | null = null;

/**
 * A job awaits a GPU promise the service just made: runs dawn.node's held poll once the current
 * synchronous work ends (a microtask; many calls in one turn make one poll), ahead of the throttle.
 * Without the throttle installed (a local device, in-process tests), dawn.node's own polling goes on as is.
 */
export function pollDawnSoon(): void {
  installed?.pollSoon();
}

/**
 * Whether dawn.node has no GPU promise pending (it asks for a poll while any is): false when the throttle
 * is not installed, since only the throttle sees dawn.node's polls.
 */
export function dawnIdle(): boolean {
  return installed?.idle() ?? false;
}

/**
 * Installs the throttle on this process's global `setImmediate` (once; later calls return the same handle).
 * `restore()` puts the original back; polls held then still run.
 */
export function throttleDawnPolling({ minIntervalUs, spinUs, backoff }: PollingOptions = DAWN_POLLING): Throttle {
  if (installed) return installed;
  const original = globalThis.setImmediate;
  const minIntervalMs = minIntervalUs / 1000;
  const spinMs = spinUs / 1000;
  const maxIntervalMs = backoff ? backoff.maxIntervalUs / 1000 : minIntervalMs;
  const divisor = backoff?.divisor ?? Infinity;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  let lastPollMs = -Infinity;
  /** When the current wait began: dawn.node asked for a poll other than from inside one (a new pending promise). */
  let waitStartMs = -Infinity;
  let polling = false;
  /** Polls waiting for their turn (dawn.node has at most one per instance); `running` is the batch being run, swapped with it. */
  let held: Callback[] = [];
  let running: Callback[] = [];
  let turning = false;

  const runHeld = (now: number): void => {
    lastPollMs = now;
    polling = true;
    // Swapped, not copied: a poll asks for the next one while it runs, into the other array. No array per poll.
    const polls = held;
    held = running;
    running = polls;
    try {
      for (let i = 0; i < polls.length; i++) polls[i]();
    } finally {
      polls.length = 0;
      polling = false;
    }
  };

  const runDue = (): void => {
    turning = false;
    if (held.length === 0) return;
    let now = performance.now();
    const intervalMs = Math.min(maxIntervalMs, Math.max(minIntervalMs, (now - waitStartMs) / divisor));
    const earlyMs = intervalMs - (now - lastPollMs);
    if (earlyMs > 0) {
      if (now - waitStartMs < spinMs) {
        turning = true;
        original(runDue);
        return;
      }
      // A long wait: sleep until the poll is due (nothing but this thread waits; sockets are served next turn).
      Atomics.wait(sleeper, 0, 0, earlyMs);
      now = performance.now();
    }
    runHeld(now);
  };

  let soon = false;
  // The immediate already scheduled for a held poll stays: it finds nothing held, or the poll dawn.node asked for again.
  const runSoon = (): void => {
    soon = false;
    if (held.length > 0 && !polling) runHeld(performance.now());
  };

  const throttled = function setImmediate(callback: Callback, ...args: unknown[]): NodeJS.Immediate {
    if (args.length > 0 || !isDawnPoll(callback)) return original(callback, ...args);
    // Asked from inside a poll: the same wait goes on; else a promise became pending after a quiet spell.
    if (!polling) waitStartMs = performance.now();
    held.push(callback);
    const immediate = turning ? undefined : original(runDue);
    turning = true;
    // dawn.node ignores what setImmediate returns.
    return immediate as NodeJS.Immediate;
  };
  // util.promisify(setImmediate) and friends read properties of the original.
  for (const key of Reflect.ownKeys(original)) {
    if (key === 'length' || key === 'name' || key === 'prototype') continue;
    Object.defineProperty(throttled, key, Object.getOwnPropertyDescriptor(original, key)!);
  }
  globalThis.setImmediate = throttled as typeof globalThis.setImmediate;
  installed = {
    idle: () => held.length === 0 && !polling,
    pollSoon() {
      if (soon) return;
      soon = true;
      queueMicrotask(runSoon);
    },
    restore() {
      if (globalThis.setImmediate === (throttled as unknown)) globalThis.setImmediate = original;
      installed = null;
    },
  };
  return installed;
}
