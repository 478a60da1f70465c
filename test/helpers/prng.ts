/** The seeded PRNG (mulberry32) of assets/jobs/prng.js, so a failing random test replays exactly. */
export { prng } from '../../assets/jobs/prng.js';
