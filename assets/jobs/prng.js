/**
 * The one seeded PRNG of Salus (mulberry32), for the example jobs, which
 * import it as plain JS, and the tests (test/helpers/prng.ts). Uniform in
 * [0, 1); the same seed gives the same sequence, so a run replays exactly.
 * Also the uniform weights and inputs the jobs draw from it.
 */

/** A generator of uniform numbers in [0, 1) from `seed`. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A number uniform in (-scale, scale). */
export function uniformIn(rand, scale) {
  return (rand() * 2 - 1) * scale;
}

/** `length` numbers uniform in (-scale, scale). */
export function uniformArray(rand, length, scale) {
  return Float32Array.from({ length }, () => uniformIn(rand, scale));
}
