/**
 * What tfjs-cnn.js and tfjs-rnn.js share (a helper module for them, not a job):
 * their flags, with a named --size, and starting TF.js's WebGPU backend the way
 * both want it.
 */

/** TF.js's MatMulProgramType.MatMulPackedProgram. */
const MATMUL_PACKED = 3;

/**
 * The job's options from `argv`: --size (a key of `sizes`; default small),
 * --iterations N (default 60), --log-every K, --lr X, --seed S. Throws, naming
 * `job` and the flags, at anything else.
 */
export function parseSizedArgs(argv, job, sizes) {
  const opts = { size: 'small', iterations: 60, logEvery: 10, lr: 0.01, seed: 1 };
  const names = { '--iterations': 'iterations', '--log-every': 'logEvery', '--lr': 'lr', '--seed': 'seed' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--size' && value in sizes) opts.size = value;
    else if (names[flag] && Number.isFinite(Number(value))) opts[names[flag]] = Number(value);
    else throw new Error(`${job}: bad argument ${flag} ${value ?? ''} (--size ${Object.keys(sizes).join('|')}, --iterations N, --log-every K, --lr X, --seed S)`);
  }
  return opts;
}

/** Starts `tf`'s WebGPU backend for `job`; throws when it does not start. */
export async function startWebgpuBackend(tf, job) {
  if (!(await tf.setBackend('webgpu'))) throw new Error(`${job}: the webgpu backend did not start (is navigator.gpu set before this module is imported?)`);
  await tf.ready();
  // TF.js picks its workgroup-reduction matmul for small outputs, whose barriers
  // SwiftShader (the software GPU) runs ~100× slower than the packed one.
  tf.env().set('WEBGPU_MATMUL_PROGRAM_TYPE', MATMUL_PACKED);
}
