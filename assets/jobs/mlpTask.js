/**
 * The regression task that wgsl-train.js and tfjs-train.js both train a 2-layer
 * MLP on (a helper module for them, not a job): a fixed, seeded teacher MLP
 * labels the inputs, and both jobs read the same flags, so the two backends
 * train on the same numbers.
 */
import { uniformIn } from './prng.js';

/** Features of one input. */
export const INPUTS = 8;
const TEACHER_HIDDEN = 16;

/** Batch and hidden units per --size. */
export const SIZES = { small: { batch: 64, hidden: 32 }, medium: { batch: 512, hidden: 64 }, large: { batch: 2048, hidden: 128 } };

/**
 * The trainer's options from `argv`: --size small|medium|large (its batch and
 * hidden; --batch and --hidden given after it win), --iterations N, --batch B,
 * --hidden H, --lr X (default `lr`), --log-every K, --seed S. Throws, naming
 * `job`, at a flag it does not know or a value that is not a number.
 */
export function parseTrainArgs(argv, job, lr) {
  const opts = { iterations: 200, batch: 64, hidden: 32, lr, logEvery: 10, seed: 1 };
  const names = { '--iterations': 'iterations', '--batch': 'batch', '--hidden': 'hidden', '--lr': 'lr', '--log-every': 'logEvery', '--seed': 'seed' };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--size' && argv[i + 1] in SIZES) {
      Object.assign(opts, SIZES[argv[++i]]);
      continue;
    }
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value)) throw new Error(`${job}: bad argument ${argv[i]} ${argv[i + 1] ?? ''}`);
    opts[key] = value;
    i++;
  }
  return opts;
}

/** The fixed teacher network that labels the data: y = v . tanh(U x + c), drawn from `rand`. */
export function makeTeacher(rand) {
  const u = Array.from({ length: TEACHER_HIDDEN * INPUTS }, () => uniformIn(rand, 1));
  const c = Array.from({ length: TEACHER_HIDDEN }, () => uniformIn(rand, 0.5));
  const v = Array.from({ length: TEACHER_HIDDEN }, () => uniformIn(rand, 1));
  return (x) => {
    let y = 0;
    for (let k = 0; k < TEACHER_HIDDEN; k++) {
      let s = c[k];
      for (let i = 0; i < INPUTS; i++) s += u[k * INPUTS + i] * x[i];
      y += v[k] * Math.tanh(s);
    }
    return y;
  };
}
