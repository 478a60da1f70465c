/**
 * Example job: TensorFlow.js on its WebGPU backend, used as any TF.js user
 * would (no flags, no patches). A 2-layer MLP (inputs -> tanh hidden -> 1),
 * built from tf.variable, is trained with Adam via optimizer.minimize on the
 * same seeded teacher-MLP regression task as wgsl-train.js.
 *
 * TF.js's WebGPU backend registers itself only if `navigator.gpu` exists when
 * it is imported, so the runner (`salus run`, or `salus run --local`) must set
 * `globalThis.navigator` and the `GPUBufferUsage`-style globals first.
 *
 * The job declares its iterations up front with `setHints` but leaves the
 * service to infer them (each step ends at the loss read-back): marked with
 * `salus.iteration`, TF.js's buffer pool, kept from step to step, counts as the
 * steps' ephemeral memory, and under a tight `--memory` a second trainer runs
 * out of lane space where inferred steps page (test/integration/memoryPaging.test.ts).
 *
 * Run: `salus run assets/jobs/tfjs-train.js -- --iterations 200 --size medium`
 * Args: --size small|medium|large (batch × hidden 64×32, 512×64, 2048×128; --batch
 * and --hidden given after it win), --iterations N, --batch B, --hidden H, --lr X,
 * --log-every K, --seed S.
 * Prints `{"step":..,"loss":..}` every K steps and `{"final":{"loss":..,"checksum":..}}`.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import { prng, uniformArray, uniformIn } from './prng.js';
import { INPUTS, makeTeacher, parseTrainArgs } from './mlpTask.js';

async function main() {
  const opts = parseTrainArgs(process.argv.slice(2), 'tfjs-train', 0.01);
  if (!(await tf.setBackend('webgpu'))) {
    throw new Error('tfjs-train: the webgpu backend did not start (is navigator.gpu set before this module is imported?)');
  }
  await tf.ready();
  globalThis.salus?.setHints({ iterations: opts.iterations });

  const { batch: B, hidden: H, iterations } = opts;
  const D = INPUTS;
  const initRand = prng(opts.seed);
  const w1 = tf.variable(tf.tensor2d(uniformArray(initRand, D * H, 1 / Math.sqrt(D)), [D, H]), true, 'w1');
  const b1 = tf.variable(tf.zeros([H]), true, 'b1');
  const w2 = tf.variable(tf.tensor2d(uniformArray(initRand, H, 1 / Math.sqrt(H)), [H, 1]), true, 'w2');
  const b2 = tf.variable(tf.zeros([1]), true, 'b2');
  const weights = [w1, b1, w2, b2];
  // Mean squared error of the MLP on (x, y), differentiable in the weights.
  const mlpLoss = (x, y) =>
    tf.customGrad((w1, b1, w2, b2, save) => {
      const hidden = tf.tanh(tf.add(tf.matMul(x, w1), b1));
      const err = tf.sub(tf.add(tf.matMul(hidden, w2), b2), y);
      save([hidden, err]);
      return {
        value: tf.mean(tf.square(err)),
        gradFunc: (dy, [hidden, err]) => {
          const dPred = tf.mul(err, tf.mul(dy, 2 / B));
          const dHidden = tf.mul(tf.matMul(dPred, w2, false, true), tf.sub(1, tf.square(hidden)));
          return [tf.matMul(x, dHidden, true, false), tf.sum(dHidden, 0), tf.matMul(hidden, dPred, true, false), tf.sum(dPred, 0)];
        },
      };
    });
  const optimizer = tf.train.adam(opts.lr);

  const teacher = makeTeacher(prng(opts.seed + 1000));
  const dataRand = prng(opts.seed + 2000);
  let loss = NaN;
  for (let step = 0; step < iterations; step++) {
    const xs = new Float32Array(B * D);
    const ys = new Float32Array(B);
    for (let b = 0; b < B; b++) {
      const x = Array.from({ length: D }, () => uniformIn(dataRand, 1));
      xs.set(x, b * D);
      ys[b] = teacher(x);
    }
    const x = tf.tensor2d(xs, [B, D]);
    const y = tf.tensor2d(ys, [B, 1]);
    const cost = optimizer.minimize(() => mlpLoss(x, y)(w1, b1, w2, b2), true, weights);
    loss = (await cost.data())[0];
    tf.dispose([x, y, cost]);

    if (!Number.isFinite(loss)) throw new Error(`tfjs-train: loss is ${loss} at step ${step}`);
    if (step % opts.logEvery === 0 || step === iterations - 1) console.log(JSON.stringify({ step, loss }));
  }

  let checksum = 0;
  for (const w of weights) for (const v of await w.data()) checksum += v;
  console.log(JSON.stringify({ final: { loss, checksum } }));
  optimizer.dispose();
  tf.dispose(weights);
}

await main();
