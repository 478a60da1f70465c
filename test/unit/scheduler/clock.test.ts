// The fake clock the scheduler's tests run on.
import { describe, expect, it } from 'vitest';
import { createFakeClock, systemClock } from '../../../core/scheduler/clock.js';

describe('createFakeClock', () => {
  it('fires due timers in order of due time, then creation, with now() at each due time', () => {
    const clock = createFakeClock(1_000);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 20);
    clock.setTimeout(() => fired.push('late'), 31);
    clock.advance(30);
    expect(fired).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(clock.now()).toBe(1_030);
    expect(clock.pendingTimers()).toBe(1);
  });

  it('fires timers set by callbacks inside the window, and never cleared ones', () => {
    const clock = createFakeClock();
    const fired: number[] = [];
    const cleared = clock.setTimeout(() => fired.push(-1), 5);
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 0);
      clock.setTimeout(() => fired.push(clock.now()), 50);
    }, 10);
    clock.clearTimeout(cleared);
    clock.advance(40);
    expect(fired).toEqual([10, 10]);
    clock.advance(20);
    expect(fired).toEqual([10, 10, 60]);
    expect(() => clock.advance(-1)).toThrow(/non-negative/);
  });
});

describe('systemClock', () => {
  it('tells epoch time and runs real timers', async () => {
    expect(Math.abs(systemClock.now() - Date.now())).toBeLessThan(1_000);
    await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 1));
    const handle = systemClock.setTimeout(() => {
      throw new Error('cleared timer fired');
    }, 1);
    systemClock.clearTimeout(handle);
    await new Promise((resolve) => setTimeout(resolve, 5));
  });
});
