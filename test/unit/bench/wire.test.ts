/**
 * The wire bench's ceiling (bench/wire.ts, W5): commands per second count only
 * the window in which every job was sending, so a job that starts late or ends
 * early does not pass its solo rate off as the service's rate with N jobs.
 */
import { describe, expect, it } from 'vitest';
import { commandsWhileAllSent } from '../../../bench/wire.js';

describe('commandsWhileAllSent', () => {
  it('counts the batches that ended while every job was timing', () => {
    const rate = commandsWhileAllSent([
      { perBatch: 100, start: 0, ends: [100, 200, 300, 400, 500] },
      // Starts late: the window opens at 150 and closes at the first job's last batch, 500.
      { perBatch: 10, start: 150, ends: [250, 350, 450, 550, 650] },
    ]);
    // Job one: batches ending at 200, 300, 400, 500; job two: 250, 350, 450.
    expect(rate).toEqual({ windowMs: 350, commands: 430, commandsPerSecond: 430 / 0.35 });
  });

  it('takes one job\'s whole timed run', () => {
    expect(commandsWhileAllSent([{ perBatch: 3000, start: 1000, ends: [1010, 1020] }])).toEqual({ windowMs: 20, commands: 6000, commandsPerSecond: 300_000 });
  });

  it('is null when the jobs never all sent at once', () => {
    expect(commandsWhileAllSent([{ perBatch: 1, start: 0, ends: [10] }, { perBatch: 1, start: 20, ends: [30] }])).toBeNull();
    expect(commandsWhileAllSent([{ perBatch: 1, start: 0, ends: [] }])).toBeNull();
    expect(commandsWhileAllSent([])).toBeNull();
  });
});
