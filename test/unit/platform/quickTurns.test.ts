// QuickTurns (core/platform/quickTurns.ts) on this process's real event loop: a peer that answered within the
// window makes the next send keep the loop turning for about the window; a slow peer, or none yet, does not.
import { describe, expect, it } from 'vitest';
import { awake, keepAwake, QuickTurns } from '../../../core/platform/quickTurns.js';

const sleepMs = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until no spin runs (one from an earlier test may still be in its window). */
async function settled(): Promise<void> {
  while (awake()) await sleepMs(1);
}

describe('QuickTurns', () => {
  it('does not spin before the peer has answered once', async () => {
    await settled();
    const turns = new QuickTurns(2000);
    turns.sent();
    expect(awake()).toBe(false);
    expect(turns.isQuick).toBe(false);
  });

  it('spins after a send to a peer that answered within the window, and stops when the window ends', async () => {
    await settled();
    const turns = new QuickTurns(2000);
    turns.sent();
    turns.received();
    expect(turns.isQuick).toBe(true);
    turns.sent();
    expect(awake()).toBe(true);
    await sleepMs(20);
    expect(awake()).toBe(false);
  });

  it('does not spin for a peer whose last answer came after twice the window', async () => {
    await settled();
    const turns = new QuickTurns(200);
    turns.sent();
    await sleepMs(5);
    turns.received();
    expect(turns.isQuick).toBe(false);
    turns.sent();
    expect(awake()).toBe(false);
    // A quick answer again brings the spin back.
    turns.received();
    turns.sent();
    turns.received();
    turns.sent();
    expect(awake()).toBe(true);
  });

  it('lets timers run while it spins, and extends a spin already running', async () => {
    await settled();
    keepAwake(5000);
    keepAwake(30_000);
    // A timer fires during the spin (it is a chain of immediates, not a busy loop), and the spin outlived 5 ms.
    await sleepMs(10);
    expect(awake()).toBe(true);
    await sleepMs(40);
    expect(awake()).toBe(false);
  });
});
