/**
 * A 100-job training trace shaped like the one of the Salus paper's JCT experiment
 * (SALUS-NOTES.md, "Evaluation setup and results"), for `salus simulate`. Every job
 * is one of the model configurations whose memory hints the paper's clients
 * declared (VGG16, ResNet50, Seq2Seq, SuperRes, VAE at their batch sizes), drawn
 * uniformly, and runs for 1, 5 or 10 minutes (the paper's run lengths, drawn
 * uniformly); arrivals are Poisson. docs/simulator.md says where each number comes
 * from and which ones are ours.
 *
 * `node dist/bench/evaluation/paperTrace.js [--seed N] [--jobs N] [--mean-gap-s S] > assets/traces/paper-100.csv`
 */
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { formatTraceCsv, type TraceJob } from '../../core/sim/trace.js';
import { exponential, seededRandom } from '../random.js';

const MB = 1024 ** 2;
const GB = 1024 ** 3;

/** One model configuration: the paper's hints (ephemeral, persistent) and an iteration time. */
export interface PaperModel {
  name: string;
  persistentBytes: number;
  ephemeralBytes: number;
  /** GPU time of one iteration on the paper's P100; see docs/simulator.md for which are measured and which estimated. */
  iterationMs: number;
}

/** The hint table of SALUS-NOTES.md; iteration times: VGG16 bs100 from the paper's run sizes, the rest estimated. */
export const PAPER_MODELS: readonly PaperModel[] = [
  { name: 'vgg16-bs25', persistentBytes: 1.6 * GB, ephemeralBytes: 5.0 * GB, iterationMs: 170 },
  { name: 'vgg16-bs50', persistentBytes: 1.6 * GB, ephemeralBytes: 8.2 * GB, iterationMs: 335 },
  { name: 'vgg16-bs100', persistentBytes: 1.6 * GB, ephemeralBytes: 11.2 * GB, iterationMs: 667 },
  { name: 'resnet50-bs25', persistentBytes: 1.7 * GB, ephemeralBytes: 5.3 * GB, iterationMs: 130 },
  { name: 'resnet50-bs50', persistentBytes: 1.7 * GB, ephemeralBytes: 8.6 * GB, iterationMs: 250 },
  { name: 'seq2seq-small', persistentBytes: 18 * MB, ephemeralBytes: 79 * MB, iterationMs: 40 },
  { name: 'seq2seq-medium', persistentBytes: 80 * MB, ephemeralBytes: 1.0 * GB, iterationMs: 100 },
  { name: 'seq2seq-large', persistentBytes: 343 * MB, ephemeralBytes: 5.1 * GB, iterationMs: 300 },
  { name: 'superres-bs32', persistentBytes: 18 * MB, ephemeralBytes: 253 * MB, iterationMs: 40 },
  { name: 'superres-bs64', persistentBytes: 32 * MB, ephemeralBytes: 500 * MB, iterationMs: 60 },
  { name: 'superres-bs128', persistentBytes: 60 * MB, ephemeralBytes: 993 * MB, iterationMs: 100 },
  { name: 'vae-bs64', persistentBytes: 21 * MB, ephemeralBytes: 10 * MB, iterationMs: 40 },
  { name: 'vae-bs128', persistentBytes: 22 * MB, ephemeralBytes: 10 * MB, iterationMs: 40 },
  { name: 'vae-bs256', persistentBytes: 23 * MB, ephemeralBytes: 20 * MB, iterationMs: 40 },
];

/** The paper's run lengths, minutes. */
export const RUN_MINUTES = [1, 5, 10] as const;

/** How the trace is drawn. */
export interface PaperTraceOptions {
  seed: number;
  jobs: number;
  /** Mean gap between Poisson arrivals, seconds. */
  meanGapS: number;
  /** Relative odds of each run length of RUN_MINUTES. */
  lengthWeights: readonly [number, number, number];
}

export const PAPER_TRACE_DEFAULTS: PaperTraceOptions = { seed: 1, jobs: 100, meanGapS: 90, lengthWeights: [22, 5, 5] };

/** Index into `weights`, drawn with odds proportional to them. */
function weightedIndex(weights: readonly number[], random: () => number): number {
  let draw = random() * weights.reduce((sum, w) => sum + w, 0);
  for (const [index, weight] of weights.entries()) {
    draw -= weight;
    if (draw < 0) return index;
  }
  return weights.length - 1;
}

/** The seeded trace: model and length drawn uniformly per job, the first job at 0 s. */
export function makePaperTrace(options: PaperTraceOptions = PAPER_TRACE_DEFAULTS): TraceJob[] {
  const random = seededRandom(options.seed);
  let arrivalS = 0;
  return Array.from({ length: options.jobs }, (_, index) => {
    if (index > 0) arrivalS += exponential(options.meanGapS, random);
    const model = PAPER_MODELS[Math.floor(random() * PAPER_MODELS.length)];
    const minutes = RUN_MINUTES[weightedIndex(options.lengthWeights, random)];
    return {
      name: `${String(index + 1).padStart(3, '0')}-${model.name}-${minutes}min`,
      arrivalS: Math.round(arrivalS * 10) / 10,
      iterations: Math.round((minutes * 60_000) / model.iterationMs),
      iterationMs: model.iterationMs,
      persistentBytes: Math.round(model.persistentBytes),
      ephemeralBytes: Math.round(model.ephemeralBytes),
      priority: 0,
      gapMs: 0,
    };
  });
}

/** The trace as CSV (the contract's columns), with a comment line saying how it was made. */
export function paperTraceCsv(options: PaperTraceOptions = PAPER_TRACE_DEFAULTS): string {
  return formatTraceCsv(makePaperTrace(options), [
    `${options.jobs} training jobs shaped like the Salus paper's JCT trace (seed ${options.seed}, Poisson arrivals, mean gap ${options.meanGapS} s); see docs/simulator.md`,
  ]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, jobs: { type: 'string' }, 'mean-gap-s': { type: 'string' } } });
  const options: PaperTraceOptions = {
    seed: Number(values.seed ?? PAPER_TRACE_DEFAULTS.seed),
    jobs: Number(values.jobs ?? PAPER_TRACE_DEFAULTS.jobs),
    meanGapS: Number(values['mean-gap-s'] ?? PAPER_TRACE_DEFAULTS.meanGapS),
    lengthWeights: PAPER_TRACE_DEFAULTS.lengthWeights,
  };
  process.stdout.write(paperTraceCsv(options));
}
