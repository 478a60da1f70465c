// The poll throttle: dawn.node's polls (native callbacks without name or parameters, passed to the
// global setImmediate) run at most once per interval; every other setImmediate is untouched. A bound
// function renamed '' is native to V8 as dawn.node's are, so it stands in for one; the real ones run
// in every `salus serve` of the integration tests.
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { pollDawnSoon, throttleDawnPolling } from '../../../core/executor/dawnPolling.js';

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

/** A native function named '' with no parameters, as dawn.node's polls are. */
const asDawnPoll = (fn: () => void) => Object.defineProperty(fn.bind(null), 'name', { value: '' });

/**
 * A chain of polls as dawn.node makes while a promise is pending: each run schedules the next, until
 * `forMs` after the first (or `count` polls); resolves with their times (ms).
 */
function pollChain({ count = Infinity, forMs = Infinity }: { count?: number; forMs?: number }): Promise<number[]> {
  return new Promise((resolve) => {
    const times: number[] = [];
    const poll = () => {
      times.push(performance.now());
      if (times.length < count && times[times.length - 1] - times[0] < forMs) setImmediate(asDawnPoll(poll));
      else resolve(times);
    };
    setImmediate(asDawnPoll(poll));
  });
}

describe('throttleDawnPolling', () => {
  it('runs a wait\'s polls at most once per interval, spinning first and sleeping past spinUs', async () => {
    restore = throttleDawnPolling({ minIntervalUs: 200, spinUs: 2000 }).restore;
    const start = performance.now();
    const times = await pollChain({ forMs: 20 });
    // The first poll of a wait is not held.
    expect(times[0] - start).toBeLessThan(50);
    // At most one poll per 0.2 ms (a busy machine makes fewer; unthrottled, a turn takes a few µs).
    const spanMs = times[times.length - 1] - times[0];
    expect(times.length).toBeGreaterThan(2);
    expect(times.length - 1).toBeLessThanOrEqual(Math.ceil(spanMs / 0.2) + 1);
  });

  it('with a backoff, spaces a long wait\'s polls out as it goes on, up to the largest interval', async () => {
    restore = throttleDawnPolling({ minIntervalUs: 50, spinUs: 0, backoff: { divisor: 8, maxIntervalUs: 1000 } }).restore;
    const times = await pollChain({ forMs: 30 });
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    // 50 µs apart throughout would be ~600 polls; an eighth of the wait (≤ 1 ms) is ~55 (a busy machine makes fewer).
    expect(times.length).toBeGreaterThan(5);
    expect(times.length).toBeLessThan(120);
    // Late in the wait the gaps are near the largest interval: at least 0.5 ms, and not held past it by the throttle.
    const late = gaps.filter((_, i) => times[i + 1] - times[0] > 12);
    expect(late.length).toBeGreaterThan(0);
    for (const gap of late) expect(gap).toBeGreaterThanOrEqual(0.9);
    // Early gaps are short: the first poll after the wait began is not held, the next ones 50 µs apart or a little more.
    expect(gaps[0]).toBeLessThan(5);
  });

  it('runs a held poll at once when a job awaits (pollDawnSoon), ahead of the throttle and of the next turn', async () => {
    // Spinning, not sleeping, so that this test's timer runs while the poll is held.
    restore = throttleDawnPolling({ minIntervalUs: 100_000, spinUs: 10_000_000 }).restore;
    // A wait in progress: its second poll is held for 100 ms.
    const held = pollChain({ count: 3 });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const ran: number[] = [];
    setImmediate(asDawnPoll(() => ran.push(performance.now())));
    pollDawnSoon();
    pollDawnSoon();
    // Both held polls run in this turn's microtasks: before any immediate, and once each.
    await Promise.resolve();
    expect(ran).toHaveLength(1);
    const [first, second, third] = await held;
    expect(second - first).toBeLessThan(50);
    // The next poll of that wait is throttled again, from the eager one.
    expect(third - second).toBeGreaterThanOrEqual(90);
  });

  it('makes pollDawnSoon a no-op without the throttle', async () => {
    const ran: number[] = [];
    pollDawnSoon();
    setImmediate(asDawnPoll(() => ran.push(1)));
    pollDawnSoon();
    await Promise.resolve();
    expect(ran).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(ran).toHaveLength(1);
  });

  it('passes JavaScript callbacks, arguments and promisify through, and restores the original', async () => {
    const original = globalThis.setImmediate;
    restore = throttleDawnPolling({ minIntervalUs: 100_000, spinUs: 0 }).restore;
    expect(globalThis.setImmediate).not.toBe(original);
    // A held native poll does not hold anything else back.
    const slow = pollChain({ count: 2 });
    const seen = await new Promise<unknown[]>((resolve) => setImmediate((...args: unknown[]) => resolve(args), 1, 'two'));
    expect(seen).toEqual([1, 'two']);
    expect(await promisify(setImmediate)('value')).toBe('value');
    // A promise's resolve is native too, but takes a parameter: awaiting a turn is not held.
    const turnStart = performance.now();
    await new Promise((resolve) => setImmediate(resolve));
    expect(performance.now() - turnStart).toBeLessThan(50);
    // Nor is a native function with a name (a bound one is 'bound …').
    const boundStart = performance.now();
    await new Promise<void>((resolve) => setImmediate((() => resolve()).bind(null)));
    expect(performance.now() - boundStart).toBeLessThan(50);
    const [first, second] = await slow;
    // Held until 100 ms after the first began (stamped a little after it ran, by a varying few µs, or ms on a busy machine).
    expect(second - first).toBeGreaterThanOrEqual(90);
    restore();
    restore = null;
    expect(globalThis.setImmediate).toBe(original);
  });
});
