/**
 * The Salus paper's three experiments at small scale, on this machine:
 * jct (average JCT, FIFO vs SRTF), sweep (hyper-parameter sweep, one at a time vs
 * PACK) and inference (42 inference jobs on one GPU, latency overhead).
 * Prints a readable summary and writes everything measured, with the
 * environment, to `bench/results/paper-<timestamp>.json` (git-ignored).
 *
 * Usage: `node dist/bench/paper/run.js [--only jct|sweep|inference[,…]] [--quick]`
 * (needs `npm run build`: it runs the compiled `salus`, as users do).
 * --quick shrinks every experiment (fewer jobs, shorter windows) to about 2 minutes.
 *
 * The figures compare sides measured in the same run; on a software GPU sharing
 * a few CPU cores with the service and every job process, CPU contention
 * dominates, so read the ratios, not the absolute times.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { machineFacts, ROOT } from '../harness.js';
import type { PaperResult } from './common.js';
import { benchJct, JCT_QUICK } from './jct.js';
import { benchSweep, SWEEP_QUICK } from './sweep.js';
import { benchInference, INFERENCE_QUICK } from './inference.js';

const log = (line: string) => process.stdout.write(`  ${line}\n`);

const EXPERIMENTS: Record<string, (quick: boolean) => Promise<PaperResult>> = {
  jct: (quick) => benchJct(quick ? JCT_QUICK : {}, log),
  sweep: (quick) => benchSweep(quick ? SWEEP_QUICK : {}, log),
  inference: (quick) => benchInference(quick ? INFERENCE_QUICK : {}, log),
};

const TITLES: Record<string, string> = {
  jct: '1. Average JCT: FIFO vs SRTF (paper: 3.19× better with SRTF)',
  sweep: '2. Hyper-parameter sweep: one at a time vs PACK (paper: 2.38× throughput)',
  inference: '3. Inference: 42 jobs on one GPU (paper: 1 GPU vs MPS 6 vs 42, < 5 ms overhead)',
};

function environment() {
  return machineFacts();
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, quick: { type: 'boolean', default: false } } });
  const names = values.only ? values.only.split(',').map((s) => s.trim()).filter(Boolean) : Object.keys(EXPERIMENTS);
  const unknown = names.filter((name) => !EXPERIMENTS[name]);
  if (unknown.length) {
    process.stderr.write(`bench paper: unknown experiment ${unknown.join(', ')}; choose from ${Object.keys(EXPERIMENTS).join(', ')}\n`);
    return 2;
  }
  const quick = values.quick ?? false;
  const startedAt = new Date();
  const env = environment();
  process.stdout.write(`bench paper${quick ? ' (quick)' : ''}: ${env.cpuCount} × ${env.cpuModel}, Node ${env.node}, load ${env.loadAverage1m}\n`);

  const results: PaperResult[] = [];
  const failures: { name: string; error: string }[] = [];
  for (const name of names) {
    const t0 = performance.now();
    process.stdout.write(`${name}…\n`);
    try {
      const result = await EXPERIMENTS[name](quick);
      results.push(result);
      log(`${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } catch (error) {
      // One broken experiment should not cost the figures of the others.
      const message = error instanceof Error ? error.message : String(error);
      failures.push({ name, error: message });
      process.stdout.write(`  FAILED\n${message}\n`);
    }
  }

  const gpu = results.find((r) => r.gpu)?.gpu ?? null;
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `paper-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(path, `${JSON.stringify({
    startedAt: startedAt.toISOString(),
    durationS: Number(((Date.now() - startedAt.getTime()) / 1000).toFixed(1)),
    quick,
    environment: {
      ...env,
      loadAverage1mAtEnd: Number(loadavg()[0].toFixed(2)),
      adapter: gpu ? gpu.description || `${gpu.vendor} ${gpu.device}`.trim() : null,
      backend: gpu?.backend ?? null,
      isSoftware: gpu?.isSoftware ?? null,
    },
    results: results.map((r) => ({ name: r.name, method: r.method, headline: r.headline, summary: r.summary, data: r.data })),
    failures,
  }, null, 2)}\n`);

  const out: string[] = [''];
  if (gpu) out.push(`GPU: ${gpu.description || gpu.device} (${gpu.backend}${gpu.isSoftware ? ', software GPU on the CPU: CPU contention dominates every figure' : ''})`);
  for (const result of results) out.push('', TITLES[result.name] ?? result.name, ...result.summary.map((line) => `  ${line}`));
  for (const failure of failures) out.push('', `${failure.name}: FAILED: ${failure.error.split('\n')[0]}`);
  out.push('', `bench paper: results in ${path}`, '');
  process.stdout.write(out.join('\n'));
  return failures.length ? 1 : 0;
}

process.exitCode = await main();
