/**
 * Seeded draws for the bench's traces: the same seed gives the same trace. The
 * generator is Salus's one PRNG (mulberry32, assets/jobs/prng.js), loaded from
 * the repository root so that `dist/bench` runs it as the sources do.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './harness.js';

const { prng } = (await import(pathToFileURL(join(ROOT, 'assets', 'jobs', 'prng.js')).href)) as typeof import('../assets/jobs/prng.js');

/** A seeded source uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  return prng(seed);
}

/** Fisher–Yates with a seeded source; returns a new array. */
export function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** An exponential draw with the given mean (Poisson arrivals have exponential gaps). */
export function exponential(mean: number, random: () => number): number {
  return -mean * Math.log(1 - random());
}
