/**
 * TensorFlow.js's own test suite as a conformance test of the remote WebGPU:
 * runs conformance/tfjs/job.js on a local device (`salus run --local`), then
 * through a real `salus serve` this script starts (`salus run`), and reports
 * the pass counts of both and every spec whose outcome differs.
 *
 * Usage: `npm run test:tfjs-suite [-- --filter REGEX] [--files GLOBS] [--json FILE] [--keep DIR]`
 * (or `node dist/conformance/tfjs/run.js …` after `npm run build`).
 *   --filter REGEX  only specs whose full name matches
 *   --files GLOBS   only these tfjs-core test files ('ops/conv2d*,ops/mat_mul*')
 *   --json FILE     also write the comparison as JSON
 *   --keep DIR      keep both runs' per-spec results (local.jsonl, remote.jsonl) in DIR
 *
 * Exits 1 when a spec that passes locally does not pass through the service
 * (specs known to be flaky locally, listed in flaky.ts with a reason, aside),
 * when either run died before the suite ended, or when no spec ran at all.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, startService, type SalusRun } from '../../bench/harness.js';
import { compareSuiteRuns, readSuiteRun, type SuiteComparison, type SuiteRun } from './compare.js';

/** The job, run from its source folder (it is not compiled). */
export const SUITE_JOB = join(ROOT, 'conformance', 'tfjs', 'job.js');

const { values: args } = parseArgs({
  options: { filter: { type: 'string' }, files: { type: 'string' }, json: { type: 'string' }, keep: { type: 'string' } },
});
const jobArgs = (out: string) => [
  ...(args.filter ? ['--filter', args.filter] : []),
  ...(args.files ? ['--files', args.files] : []),
  '--out', out,
];

function describeRun(label: string, run: SalusRun, suite: SuiteRun): string {
  const seconds = suite.durationMs === null ? '?' : (suite.durationMs / 1000).toFixed(0);
  const { passed, failed, pending } = suite.counts;
  const total = passed + failed + pending;
  const status = suite.complete ? '' : `  INCOMPLETE (exit ${run.code}): ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`;
  return `${label.padEnd(8)} ${String(passed).padStart(5)} passed ${String(failed).padStart(5)} failed ${String(pending).padStart(4)} pending of ${total} in ${seconds} s, ${suite.adaptersRequested ?? '?'} devices${status}`;
}

function printComparison(comparison: SuiteComparison): void {
  const short = (text = '') => text.replace(/\s+/g, ' ').slice(0, 200);
  if (comparison.differing.length === 0) {
    console.log('every spec has the same outcome on both sides');
    return;
  }
  console.log(`${comparison.differing.length} spec(s) differ (local -> remote):`);
  for (const d of comparison.differing) {
    const tag = d.flakyReason ? `  [flaky locally: ${d.flakyReason}]` : d.local === 'passed' ? '  [REGRESSION]' : '';
    console.log(`  ${d.local} -> ${d.remote}${tag}  ${d.name}`);
    if (d.remoteMessage) console.log(`      remote: ${short(d.remoteMessage)}`);
    if (d.localMessage) console.log(`      local:  ${short(d.localMessage)}`);
  }
}

const dir = args.keep ?? mkdtempSync(join(tmpdir(), 'salus-tfjs-suite-'));
mkdirSync(dir, { recursive: true });
const [localOut, remoteOut] = [join(dir, 'local.jsonl'), join(dir, 'remote.jsonl')];
const service = await startService();
let exitCode = 0;
try {
  // One after the other: on a few cores, side by side would slow both into jasmine's 20 s spec timeout.
  const localRun = await service.runLocal(SUITE_JOB, jobArgs(localOut)).done;
  const remoteRun = await service.run(SUITE_JOB, jobArgs(remoteOut), ['--name', 'tfjs-suite']).done;
  const [local, remote] = [readSuiteRun(localOut), readSuiteRun(remoteOut)];
  const comparison = compareSuiteRuns(local, remote);
  console.log(describeRun('local', localRun, local));
  console.log(describeRun('remote', remoteRun, remote));
  printComparison(comparison);
  if (args.json) writeFileSync(args.json, JSON.stringify({ filter: args.filter ?? null, files: args.files ?? null, ...comparison }, null, 2));
  const ranNothing = local.counts.passed === 0;
  if (comparison.regressions.length > 0 || !local.complete || !remote.complete || ranNothing) {
    console.log(`FAIL: ${comparison.regressions.length} regression(s)${local.complete && remote.complete ? '' : ', a run did not finish'}${ranNothing ? ', no spec passed locally' : ''}`);
    if (!remote.complete) console.log(`--- salus serve\n${service.log().slice(-3000)}`);
    exitCode = 1;
  }
} finally {
  await service.stop();
  if (!args.keep) rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
