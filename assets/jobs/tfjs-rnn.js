/**
 * Example job: a small recurrent net (an Elman RNN, unrolled over a sequence)
 * in TensorFlow.js on its WebGPU backend, trained with Adam on seeded synthetic
 * sequences (no downloads). Each target is what a fixed random "teacher" RNN
 * outputs after reading the same sequence, so the student must learn to carry
 * state across steps: h_t = tanh(x_t Wx + h_{t-1} Wh + b), y = h_T v + c.
 * TF.js's core registers no gradients (its union package does), so the
 * backward pass through time is written out, as in tfjs-train.js.
 *
 * Each training step is one iteration, marked with `globalThis.salus.iteration`
 * when the job runs under `salus run` (a plain call under `salus run --local`),
 * and the total is declared up front with `setHints`.
 *
 * Run: `salus run assets/jobs/tfjs-rnn.js -- --size small --iterations 60`
 * Args: --size small|medium|large, --iterations N, --log-every K, --lr X, --seed S.
 * Prints `{"step":..,"loss":..}` every K steps and `{"final":{"loss":..,"checksum":..}}`.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import { prng, uniformArray } from './prng.js';
import { parseSizedArgs, startWebgpuBackend } from './tfjsSized.js';

const INPUTS = 4;
const TEACHER_HIDDEN = 8;
/** Batch, sequence length (steps unrolled) and hidden units of the student. */
const SIZES = {
  small: { batch: 8, steps: 6, hidden: 16 },
  medium: { batch: 16, steps: 12, hidden: 32 },
  large: { batch: 32, steps: 24, hidden: 64 },
};

/** The fixed teacher RNN that labels a sequence (an array of INPUTS-vectors). */
function makeTeacher(rand) {
  const H = TEACHER_HIDDEN;
  const wx = uniformArray(rand, INPUTS * H, 1);
  const wh = uniformArray(rand, H * H, 0.6 / Math.sqrt(H));
  const v = uniformArray(rand, H, 1);
  return (sequence) => {
    let h = new Float32Array(H);
    for (const x of sequence) {
      const next = new Float32Array(H);
      for (let j = 0; j < H; j++) {
        let s = 0;
        for (let i = 0; i < INPUTS; i++) s += x[i] * wx[i * H + j];
        for (let k = 0; k < H; k++) s += h[k] * wh[k * H + j];
        next[j] = Math.tanh(s);
      }
      h = next;
    }
    return h.reduce((sum, value, j) => sum + value * v[j], 0);
  };
}

/** One batch: per step an input block [B, INPUTS], and targets [B, 1]. */
function makeBatch(rand, teacher, batch, steps) {
  const inputs = Array.from({ length: steps }, () => new Float32Array(batch * INPUTS));
  const targets = new Float32Array(batch);
  for (let b = 0; b < batch; b++) {
    const sequence = inputs.map((block) => {
      const x = uniformArray(rand, INPUTS, 1);
      block.set(x, b * INPUTS);
      return x;
    });
    targets[b] = teacher(sequence);
  }
  return { inputs, targets };
}

async function main() {
  const opts = parseSizedArgs(process.argv.slice(2), 'tfjs-rnn', SIZES);
  const { batch: B, steps: T, hidden: H } = SIZES[opts.size];
  await startWebgpuBackend(tf, 'tfjs-rnn');
  const iteration = globalThis.salus?.iteration ?? ((fn) => fn());
  globalThis.salus?.setHints({ iterations: opts.iterations });

  const initRand = prng(opts.seed);
  const wx = tf.variable(tf.tensor2d(uniformArray(initRand, INPUTS * H, 1 / Math.sqrt(INPUTS)), [INPUTS, H]), true, 'wx');
  const wh = tf.variable(tf.tensor2d(uniformArray(initRand, H * H, 0.5 / Math.sqrt(H)), [H, H]), true, 'wh');
  const b = tf.variable(tf.zeros([H]), true, 'b');
  const v = tf.variable(tf.tensor2d(uniformArray(initRand, H, 1 / Math.sqrt(H)), [H, 1]), true, 'v');
  const c = tf.variable(tf.zeros([1]), true, 'c');
  const weights = [wx, wh, b, v, c];
  // Mean squared error of the RNN on (xs, y), with backpropagation through time.
  const rnnLoss = (xs, y) =>
    tf.customGrad((wx, wh, b, v, c, save) => {
      const hs = [tf.zeros([B, H])];
      for (const x of xs) hs.push(tf.tanh(tf.add(tf.add(tf.matMul(x, wx), tf.matMul(hs[hs.length - 1], wh)), b)));
      const err = tf.sub(tf.add(tf.matMul(hs[T], v), c), y);
      save([err, ...hs]);
      return {
        value: tf.mean(tf.square(err)),
        gradFunc: (dy, [err, ...hs]) => {
          const dPred = tf.mul(err, tf.mul(dy, 2 / B));
          let dh = tf.matMul(dPred, v, false, true);
          // Summed step by step: tf.addN binds every term at once, and past 7 terms
          // that passes WebGPU's 8 storage buffers per shader stage.
          let [dwx, dwh, db] = [tf.zerosLike(wx), tf.zerosLike(wh), tf.zerosLike(b)];
          for (let t = T; t >= 1; t--) {
            const dz = tf.mul(dh, tf.sub(1, tf.square(hs[t])));
            dwx = tf.add(dwx, tf.matMul(xs[t - 1], dz, true, false));
            dwh = tf.add(dwh, tf.matMul(hs[t - 1], dz, true, false));
            db = tf.add(db, tf.sum(dz, 0));
            dh = tf.matMul(dz, wh, false, true);
          }
          return [dwx, dwh, db, tf.matMul(hs[T], dPred, true, false), tf.sum(dPred, 0)];
        },
      };
    })(wx, wh, b, v, c);
  const optimizer = tf.train.adam(opts.lr);

  const teacher = makeTeacher(prng(opts.seed + 1000));
  const dataRand = prng(opts.seed + 2000);
  let loss = NaN;
  for (let step = 0; step < opts.iterations; step++) {
    const { inputs, targets } = makeBatch(dataRand, teacher, B, T);
    loss = await iteration(async () => {
      const xs = inputs.map((block) => tf.tensor2d(block, [B, INPUTS]));
      const y = tf.tensor2d(targets, [B, 1]);
      const cost = optimizer.minimize(() => rnnLoss(xs, y), true, weights);
      const value = (await cost.data())[0];
      tf.dispose([...xs, y, cost]);
      return value;
    });
    if (!Number.isFinite(loss)) throw new Error(`tfjs-rnn: loss is ${loss} at step ${step}`);
    if (step % opts.logEvery === 0 || step === opts.iterations - 1) console.log(JSON.stringify({ step, loss }));
  }

  let checksum = 0;
  for (const w of weights) for (const value of await w.data()) checksum += value;
  console.log(JSON.stringify({ final: { loss, checksum } }));
  optimizer.dispose();
  tf.dispose(weights);
}

await main();
