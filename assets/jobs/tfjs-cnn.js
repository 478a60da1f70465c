/**
 * Example job: a small convolutional net in TensorFlow.js on its WebGPU
 * backend, trained with Adam on seeded synthetic images (no downloads). Each
 * image is noise plus one of four stripe patterns (horizontal, vertical,
 * diagonal, none); the net learns which: conv 3×3 -> relu -> avg-pool 2×2 ->
 * conv 3×3 -> relu -> global mean -> dense -> softmax cross-entropy, with
 * gradients from TF.js's own autodiff.
 *
 * Each training step is one iteration, marked with `globalThis.salus.iteration`
 * when the job runs under `salus run` (a plain call under `salus run --local`),
 * and the total is declared up front with `setHints`.
 *
 * Run: `salus run assets/jobs/tfjs-cnn.js -- --size small --iterations 40`
 * Args: --size small|medium|large, --iterations N, --log-every K, --lr X, --seed S.
 * Prints `{"step":..,"loss":..}` every K steps and `{"final":{"loss":..,"accuracy":..,"checksum":..}}`.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-webgpu';
import { prng, uniformArray } from './prng.js';
import { parseSizedArgs, startWebgpuBackend } from './tfjsSized.js';

const CLASSES = 4;
/** Batch, image side (pixels) and channels of the first conv (the second has twice as many). */
const SIZES = {
  small: { batch: 8, side: 8, channels: 4 },
  medium: { batch: 16, side: 16, channels: 8 },
  large: { batch: 32, side: 24, channels: 16 },
};

/** Pixel (y, x) of pattern `label` with stripe phase `phase`: 1 on a stripe, else 0. */
function pattern(label, y, x, phase) {
  if (label === 0) return (y + phase) % 3 === 0 ? 1 : 0;
  if (label === 1) return (x + phase) % 3 === 0 ? 1 : 0;
  if (label === 2) return (x + y + phase) % 3 === 0 ? 1 : 0;
  return 0;
}

/** One batch: images [B, side, side, 1] (NHWC) and one-hot labels [B, CLASSES]. */
function makeBatch(rand, batch, side) {
  const images = new Float32Array(batch * side * side);
  const labels = new Float32Array(batch * CLASSES);
  for (let b = 0; b < batch; b++) {
    const label = Math.floor(rand() * CLASSES);
    const phase = Math.floor(rand() * 3);
    labels[b * CLASSES + label] = 1;
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) images[(b * side + y) * side + x] = pattern(label, y, x, phase) + (rand() - 0.5) * 0.6;
    }
  }
  return { images, labels };
}

async function main() {
  const opts = parseSizedArgs(process.argv.slice(2), 'tfjs-cnn', SIZES);
  const { batch: B, side: S, channels: C } = SIZES[opts.size];
  await startWebgpuBackend(tf, 'tfjs-cnn');
  const iteration = globalThis.salus?.iteration ?? ((fn) => fn());
  globalThis.salus?.setHints({ iterations: opts.iterations });

  const initRand = prng(opts.seed);
  const w = {
    k1: tf.variable(tf.tensor4d(uniformArray(initRand, 9 * C, Math.sqrt(6 / 9)), [3, 3, 1, C]), true, 'k1'),
    b1: tf.variable(tf.zeros([C]), true, 'b1'),
    k2: tf.variable(tf.tensor4d(uniformArray(initRand, 9 * C * 2 * C, Math.sqrt(6 / (9 * C))), [3, 3, C, 2 * C]), true, 'k2'),
    b2: tf.variable(tf.zeros([2 * C]), true, 'b2'),
    dense: tf.variable(tf.tensor2d(uniformArray(initRand, 2 * C * CLASSES, Math.sqrt(6 / (2 * C))), [2 * C, CLASSES]), true, 'dense'),
    bias: tf.variable(tf.zeros([CLASSES]), true, 'bias'),
  };
  const weights = Object.values(w);
  // TF.js's core registers no gradients (its union package does), so the
  // backward pass is written out, as in tfjs-train.js; the convolution and
  // pooling gradients are the backend's own kernels.
  const run = (kernel, inputs, attrs) => tf.engine().runKernel(kernel, inputs, attrs);
  const convAttrs = { strides: 1, pad: 'same', dataFormat: 'NHWC' };
  const netLoss = (x, y) =>
    tf.customGrad((k1, b1, k2, b2, dense, bias, save) => {
      const a1 = tf.relu(tf.add(tf.conv2d(x, k1, 1, 'same'), b1));
      const p1 = tf.avgPool(a1, 2, 2, 'valid');
      const a2 = tf.relu(tf.add(tf.conv2d(p1, k2, 1, 'same'), b2));
      const g = tf.mean(a2, [1, 2]);
      const logits = tf.add(tf.matMul(g, dense), bias);
      save([a1, p1, a2, g, logits]);
      return {
        value: tf.neg(tf.mean(tf.sum(tf.mul(y, tf.logSoftmax(logits)), 1))),
        gradFunc: (dy, [a1, p1, a2, g, logits]) => {
          const dLogits = tf.mul(tf.sub(tf.softmax(logits), y), tf.div(dy, B));
          const [, h2, w2, c2] = a2.shape;
          const dA2 = tf.broadcastTo(tf.reshape(tf.div(tf.matMul(dLogits, dense, false, true), h2 * w2), [B, 1, 1, c2]), a2.shape);
          const dZ2 = tf.mul(dA2, tf.step(a2));
          const dP1 = tf.conv2dTranspose(dZ2, k2, p1.shape, 1, 'same');
          const dZ1 = tf.mul(run('AvgPoolGrad', { dy: dP1, input: a1 }, { filterSize: 2, strides: 2, pad: 'valid' }), tf.step(a1));
          return [
            run('Conv2DBackpropFilter', { x, dy: dZ1 }, { ...convAttrs, filterShape: k1.shape }), tf.sum(dZ1, [0, 1, 2]),
            run('Conv2DBackpropFilter', { x: p1, dy: dZ2 }, { ...convAttrs, filterShape: k2.shape }), tf.sum(dZ2, [0, 1, 2]),
            tf.matMul(g, dLogits, true, false), tf.sum(dLogits, 0),
          ];
        },
      };
    })(...weights);
  const optimizer = tf.train.adam(opts.lr);

  const dataRand = prng(opts.seed + 2000);
  let loss = NaN;
  for (let step = 0; step < opts.iterations; step++) {
    const { images, labels } = makeBatch(dataRand, B, S);
    loss = await iteration(async () => {
      const x = tf.tensor4d(images, [B, S, S, 1]);
      const y = tf.tensor2d(labels, [B, CLASSES]);
      const cost = optimizer.minimize(() => netLoss(x, y), true, weights);
      const value = (await cost.data())[0];
      tf.dispose([x, y, cost]);
      return value;
    });
    if (!Number.isFinite(loss)) throw new Error(`tfjs-cnn: loss is ${loss} at step ${step}`);
    if (step % opts.logEvery === 0 || step === opts.iterations - 1) console.log(JSON.stringify({ step, loss }));
  }

  // Accuracy on a fresh batch, from the forward pass alone.
  const test = makeBatch(dataRand, 4 * B, S);
  const predicted = tf.tidy(() => {
    const x = tf.tensor4d(test.images, [4 * B, S, S, 1]);
    const a1 = tf.relu(tf.add(tf.conv2d(x, w.k1, 1, 'same'), w.b1));
    const a2 = tf.relu(tf.add(tf.conv2d(tf.avgPool(a1, 2, 2, 'valid'), w.k2, 1, 'same'), w.b2));
    return tf.argMax(tf.add(tf.matMul(tf.mean(a2, [1, 2]), w.dense), w.bias), 1);
  });
  const labels = await predicted.data();
  predicted.dispose();
  let correct = 0;
  for (let b = 0; b < labels.length; b++) correct += test.labels[b * CLASSES + labels[b]];
  const accuracy = correct / labels.length;

  let checksum = 0;
  for (const v of weights) for (const value of await v.data()) checksum += value;
  console.log(JSON.stringify({ final: { loss, accuracy, checksum } }));
  optimizer.dispose();
  tf.dispose(weights);
}

await main();
