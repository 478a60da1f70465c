/**
 * E3's request schedules (bench/evaluation/inference.ts): each server gets the requests of
 * ort-serve.js's own seeded Poisson schedule that arrive within the step's duration.
 */
import { describe, expect, it } from 'vitest';
import { requestsWithin } from '../../../bench/evaluation/inference.js';

/** ort-serve.js's own PRNG (a JavaScript module without types). */
const MODELS = '../../../assets/jobs/ort-models.js';

describe('requestsWithin', () => {
  it('counts the arrivals of ort-serve.js\'s schedule (seed + 2000, exponential gaps) up to the duration', async () => {
    const { prng } = (await import(MODELS)) as { prng: (seed: number) => () => number };
    const rand = prng(7 + 2000);
    const arrivals: number[] = [];
    for (let t = 0; arrivals.length < 50; t += (-Math.log(1 - rand()) / 0.1) * 1000) arrivals.push(t);
    expect(await requestsWithin(7, 0.1, 120_000)).toBe(arrivals.filter((t) => t <= 120_000).length);
  });

  it('is at least the first request, and grows with the duration', async () => {
    expect(await requestsWithin(1, 0.1, 0)).toBe(1);
    const short = await requestsWithin(3, 0.1, 60_000);
    expect(await requestsWithin(3, 0.1, 600_000)).toBeGreaterThan(short);
  });
});
