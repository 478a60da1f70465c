/**
 * Time as the scheduler sees it. The scheduler reads the time and sets timers only
 * through a `Clock`, so tests drive it with `createFakeClock()` and every decision is
 * deterministic.
 */

/** An opaque timer, as returned by `Clock.setTimeout`. */
export type TimerHandle = unknown;

/** A source of time in milliseconds, and timers on that time. */
export interface Clock {
  /** Milliseconds; `systemClock` answers epoch milliseconds. */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now (at once-ish for `ms <= 0`). */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer that has not fired yet; a no-op for one that has. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now()` and the host's timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** A clock that moves only when told to. */
export interface FakeClock extends Clock {
  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way in order
   * of due time (then of creation), with `now()` equal to each timer's due time while
   * it runs. Timers that callbacks set inside the window fire too.
   */
  advance(ms: number): void;
  /** Number of timers not yet fired or cleared. */
  pendingTimers(): number;
}

interface FakeTimer {
  id: number;
  dueMs: number;
  fn: () => void;
}

/** A `FakeClock` that starts at `startMs` (0 by default). */
export function createFakeClock(startMs = 0): FakeClock {
  let nowMs = startMs;
  let nextId = 1;
  const timers = new Map<number, FakeTimer>();

  function nextDue(untilMs: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of timers.values()) {
      if (timer.dueMs > untilMs) continue;
      if (!best || timer.dueMs < best.dueMs || (timer.dueMs === best.dueMs && timer.id < best.id)) best = timer;
    }
    return best;
  }

  return {
    now: () => nowMs,
    setTimeout(fn, ms) {
      const id = nextId++;
      timers.set(id, { id, dueMs: nowMs + Math.max(0, ms), fn });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      if (!(ms >= 0)) throw new Error(`advance(ms) needs a non-negative number, got ${ms}`);
      const untilMs = nowMs + ms;
      for (let timer = nextDue(untilMs); timer; timer = nextDue(untilMs)) {
        timers.delete(timer.id);
        nowMs = timer.dueMs;
        timer.fn();
      }
      nowMs = untilMs;
    },
    pendingTimers: () => timers.size,
  };
}
