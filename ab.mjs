import { benchIterationTime } from './dist/bench/iterationTime.js';
const reps = Number(process.env.REPS ?? 3);
const r = await benchIterationTime({ examples: [{ name: 'WGSL', file: 'assets/jobs/wgsl-train.js', iterations: 300, warmup: 40, repeats: reps }] });
const d = r.data.WGSL;
console.log(process.env.LABEL ?? '', 'salus', d.salusMs.median, 'local', d.localMs.median, 'ratio', d.ratio, 'paired', d.pairedRatios.join(' '));
