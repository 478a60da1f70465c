/** The simulator's clock: timers run in order of due time, then of setting, with now() at their due time. */
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../../core/sim/virtualClock.js';

describe('createVirtualClock', () => {
  it('runs timers in order of due time, ties in the order they were set, including timers set by timers', () => {
    const clock = createVirtualClock(100);
    const seen: string[] = [];
    const note = (name: string) => () => seen.push(`${name}@${clock.now()}`);
    clock.setTimeout(note('b'), 20);
    clock.setTimeout(note('a'), 10);
    clock.setTimeout(() => {
      note('c')();
      clock.setTimeout(note('e'), 0);
      clock.setTimeout(note('f'), 5);
    }, 20);
    clock.setTimeout(note('d'), 20);
    clock.setTimeout(note('late'), -5);
    while (clock.runNext());
    expect(seen).toEqual(['late@100', 'a@110', 'b@120', 'c@120', 'd@120', 'e@120', 'f@125']);
    expect(clock.now()).toBe(125);
    expect(clock.runNext()).toBe(false);
  });

  it('skips cleared timers and counts only pending ones', () => {
    const clock = createVirtualClock();
    const seen: number[] = [];
    const handles = [1, 2, 3].map((n) => clock.setTimeout(() => seen.push(n), n));
    clock.clearTimeout(handles[1]);
    clock.clearTimeout(handles[1]);
    expect(clock.pendingTimers()).toBe(2);
    expect(clock.runNext()).toBe(true);
    clock.clearTimeout(handles[0]); // already run: a no-op
    expect(clock.pendingTimers()).toBe(1);
    while (clock.runNext());
    expect(seen).toEqual([1, 3]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
