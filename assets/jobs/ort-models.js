/**
 * Two small ONNX models built in code for assets/jobs/ort-infer.js, with
 * seeded weights (nothing downloaded): an MLP and a small conv net. Each is
 * `{ name, bytes, inputName, inputDims }`, `bytes` being the serialized
 * ModelProto (opset 17), ready for `InferenceSession.create(bytes)`.
 */
import onnxProto from 'onnx-proto';
import { prng, uniformArray } from './prng.js';

/** Re-exported for the inference benchmark (bench/evaluation/inference.ts), which draws its requests as the servers do. */
export { prng };

const { onnx } = onnxProto;
const FLOAT = onnx.TensorProto.DataType.FLOAT;
const OPSET = 17;

const count = (dims) => dims.reduce((a, b) => a * b, 1);

/** A float initializer with He-style uniform values (fan-in `fanIn`), or zeros-ish biases. */
function weight(rand, name, dims, fanIn) {
  const values = uniformArray(rand, count(dims), Math.sqrt(6 / fanIn));
  return onnx.TensorProto.create({ name, dims, dataType: FLOAT, rawData: new Uint8Array(values.buffer) });
}

function valueInfo(name, dims) {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((dimValue) => ({ dimValue })) } } },
  });
}

const ints = (name, values) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: values });
const int = (name, value) => onnx.AttributeProto.create({ name, type: onnx.AttributeProto.AttributeType.INT, i: value });
const node = (opType, input, output, attribute = []) => onnx.NodeProto.create({ opType, input, output, attribute, name: output[0] });

function serialize(name, nodes, initializer, input, output) {
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: 'salus ort-infer',
    opsetImport: [{ domain: '', version: OPSET }],
    graph: { name, node: nodes, initializer, input: [input], output: [output] },
  });
  return onnx.ModelProto.encode(model).finish();
}

/** x[B,64] -> Gemm 128 -> Relu -> MatMul+Add 64 -> Tanh -> Gemm (transB) 10 -> logits[B,10]. */
export function buildMlp(batch, seed) {
  const rand = prng(seed);
  const dims = { input: 64, hidden1: 128, hidden2: 64, classes: 10 };
  const initializer = [
    weight(rand, 'w1', [dims.input, dims.hidden1], dims.input),
    weight(rand, 'b1', [dims.hidden1], dims.input * 16),
    weight(rand, 'w2', [dims.hidden1, dims.hidden2], dims.hidden1),
    weight(rand, 'b2', [dims.hidden2], dims.hidden1 * 16),
    weight(rand, 'w3', [dims.classes, dims.hidden2], dims.hidden2),
    weight(rand, 'b3', [dims.classes], dims.hidden2 * 16),
  ];
  const nodes = [
    node('Gemm', ['x', 'w1', 'b1'], ['h1']),
    node('Relu', ['h1'], ['a1']),
    node('MatMul', ['a1', 'w2'], ['m2']),
    node('Add', ['m2', 'b2'], ['h2']),
    node('Tanh', ['h2'], ['a2']),
    node('Gemm', ['a2', 'w3', 'b3'], ['logits'], [int('transB', 1)]),
  ];
  const inputDims = [batch, dims.input];
  const bytes = serialize('mlp', nodes, initializer, valueInfo('x', inputDims), valueInfo('logits', [batch, dims.classes]));
  return { name: 'mlp', bytes, inputName: 'x', inputDims };
}

/**
 * image[B,3,16,16] -> Conv 3x3 (8) -> Relu -> MaxPool 2x2 -> Conv 3x3 (16) -> Relu
 * -> GlobalAveragePool -> Flatten -> Gemm 10 -> logits[B,10].
 */
export function buildConvNet(batch, seed) {
  const rand = prng(seed);
  const initializer = [
    weight(rand, 'c1', [8, 3, 3, 3], 27),
    weight(rand, 'cb1', [8], 27 * 16),
    weight(rand, 'c2', [16, 8, 3, 3], 72),
    weight(rand, 'cb2', [16], 72 * 16),
    weight(rand, 'fc', [16, 10], 16),
    weight(rand, 'fcb', [10], 16 * 16),
  ];
  const same = [ints('pads', [1, 1, 1, 1]), ints('kernel_shape', [3, 3])];
  const nodes = [
    node('Conv', ['image', 'c1', 'cb1'], ['k1'], same),
    node('Relu', ['k1'], ['r1']),
    node('MaxPool', ['r1'], ['p1'], [ints('kernel_shape', [2, 2]), ints('strides', [2, 2])]),
    node('Conv', ['p1', 'c2', 'cb2'], ['k2'], same),
    node('Relu', ['k2'], ['r2']),
    node('GlobalAveragePool', ['r2'], ['g']),
    node('Flatten', ['g'], ['f']),
    node('Gemm', ['f', 'fc', 'fcb'], ['logits']),
  ];
  const inputDims = [batch, 3, 16, 16];
  const bytes = serialize('convnet', nodes, initializer, valueInfo('image', inputDims), valueInfo('logits', [batch, 10]));
  return { name: 'convnet', bytes, inputName: 'image', inputDims };
}
