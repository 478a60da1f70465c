/**
 * E3's request schedules (bench/evaluation/inference.ts): each server gets the requests of
 * ort-serve.js's own seeded Poisson schedule that arrive within the step's duration; and
 * its MPS-style baseline: how many devices first-fit decreasing packs the servers' P + E into.
 */
import { describe, expect, it } from 'vitest';
import { mpsGpus, requestsWithin } from '../../../bench/evaluation/inference.js';

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

describe('mpsGpus', () => {
  const job = (persistentBytes: number, ephemeralBytes: number) => ({ persistentBytes, ephemeralBytes });

  it('packs the largest P + E first, each into the first device with room', () => {
    // Sizes 6, 5, 4, 3, 2 into devices of 10: [6, 4], [5, 3, 2].
    const jobs = [job(1, 1), job(2, 2), job(3, 3), job(1, 3), job(2, 1)];
    expect(mpsGpus(jobs, 10)).toBe(2);
    // In arrival order first-fit would need three: [2, 4, 3], [6], [5] — decreasing order is what makes two.
    expect(mpsGpus([job(1, 1), job(2, 2), job(2, 1), job(3, 3), job(1, 4)], 10)).toBe(2);
  });

  it('needs one device per job when no two fit together, and none for no jobs', () => {
    expect(mpsGpus([job(4, 2), job(5, 1), job(3, 3)], 10)).toBe(3);
    expect(mpsGpus([], 10)).toBe(0);
  });
});
