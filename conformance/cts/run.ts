/**
 * WebGPU's Conformance Test Suite (CTS) as a conformance tool of the remote
 * WebGPU: each query runs on a local device (`salus run --local`) and through a
 * real `salus serve` this script starts (`salus run`), and the cases that pass
 * locally but not through the service are reported grouped by cause, with
 * timings. The service must stay alive throughout: a query it dies in is
 * reported, and a new service serves the next one.
 *
 * Usage: `npm run test:cts -- --cts DIR [--query Q]... [--json FILE]`
 * (or `node dist/conformance/cts/run.js …` after `npm run build`).
 *   --cts DIR     a CTS checkout with its Node build (see HOW_TO_GET_THE_CTS)
 *   --query Q     a CTS query (repeatable; default: DEFAULT_QUERIES, about 12,600 cases)
 *   --json FILE   also write every query's counts and regressions as JSON
 *
 * Exits 1 when a case that passes locally does not pass through the service
 * (known locally flaky cases, flaky.ts, are listed with their reason and not
 * counted), when the service died, or when no case passed locally at all.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, startService, type BenchService, type SalusRun } from '../../bench/harness.js';
import { DEFAULT_QUERIES } from './queries.js';
import { groupByCause, parseQueryOutput, passCount, regressions, setApartLocallyFlaky, type FlakyCase, type QueryRun, type Regression } from './results.js';

/** The job that runs one query (plain JS, run from its source folder). */
const CTS_JOB = join(ROOT, 'conformance', 'cts', 'job.js');

/** What to do when --cts is missing or not built: the CTS is not on npm, and nothing of it is in this repository. */
export const HOW_TO_GET_THE_CTS = `The CTS is not on npm: clone it and build its Node output, once:
  git clone https://github.com/gpuweb/cts.git ~/webgpu-cts && cd ~/webgpu-cts
  npm ci
  node tools/gen_version && node tools/gen_listings_and_webworkers gen/ src/webgpu
  npx tsc --project node.tsconfig.json --outDir out-node/
then: npm run test:cts -- --cts ~/webgpu-cts`;

const USAGE = `Usage: npm run test:cts -- --cts DIR [--query Q]... [--json FILE]
  --cts DIR     a CTS checkout with its Node build
  --query Q     a CTS query (repeatable; default: the ${DEFAULT_QUERIES.length} queries of conformance/cts/queries.ts)
  --json FILE   also write every query's counts and regressions as JSON`;

let parsed;
try {
  parsed = parseArgs({
    options: { cts: { type: 'string' }, query: { type: 'string', multiple: true }, json: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (error) {
  console.error(`salus: ${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const args = parsed.values;
if (args.help) {
  console.log(`${USAGE}\n\n${HOW_TO_GET_THE_CTS}`);
  process.exit(0);
}
const ctsDir = args.cts ? resolve(args.cts) : null;
if (!ctsDir || !existsSync(join(ctsDir, 'out-node', 'common', 'runtime', 'cmdline.js'))) {
  console.error(ctsDir ? `salus: ${ctsDir} has no CTS Node build (out-node/common/runtime/cmdline.js).` : 'salus: say where the CTS is: --cts DIR.');
  console.error(HOW_TO_GET_THE_CTS);
  process.exit(2);
}
const queries = args.query?.length ? args.query : DEFAULT_QUERIES;

function outputOf(run: SalusRun): QueryRun {
  const parsed = parseQueryOutput(run.lines.map((line) => line.text).join('\n'));
  if (parsed.error) parsed.error = `${parsed.error} (exit ${run.code}: ${run.stderr.trim().split('\n').slice(-2).join(' | ')})`;
  return parsed;
}

interface QueryReport {
  query: string;
  local: { passed: number; total: number; seconds: number };
  remote: { passed: number; total: number; seconds: number };
  regressions: Regression[];
  /** Cases that passed locally only by chance (flaky.ts), with the reason. */
  locallyFlaky: FlakyCase[];
  serviceDied: boolean;
  error: string | null;
}

let service: BenchService = await startService(['--memory', '2GiB']);
const reports: QueryReport[] = [];
for (const query of queries) {
  const jobArgs = [ctsDir, '--print-json', '--quiet', query];
  const localStart = performance.now();
  const local = outputOf(await service.runLocal(CTS_JOB, jobArgs).done);
  const remoteStart = performance.now();
  const remoteRun = await service.run(CTS_JOB, jobArgs, ['--name', 'cts']).done;
  const remoteEnd = performance.now();
  const remote = outputOf(remoteRun);
  // Whether the service is still there: a control call must be answered.
  const serviceDied = await service.call('jobs').then(() => false, () => true);
  const { real, flaky } = setApartLocallyFlaky(regressions(local, remote));
  const report: QueryReport = {
    query,
    local: { ...passCount(local), seconds: (remoteStart - localStart) / 1000 },
    remote: { ...passCount(remote), seconds: (remoteEnd - remoteStart) / 1000 },
    regressions: real,
    locallyFlaky: flaky,
    serviceDied,
    error: local.error ?? remote.error,
  };
  reports.push(report);
  const line = (side: QueryReport['local']) => `${String(side.passed).padStart(5)}/${String(side.total).padEnd(5)} ${side.seconds.toFixed(1).padStart(6)} s`;
  console.log(`${query.padEnd(72)} local ${line(report.local)}   service ${line(report.remote)}   ${report.regressions.length ? `${report.regressions.length} REGRESSED` : ''}${report.locallyFlaky.length ? ` ${report.locallyFlaky.length} locally flaky` : ''}`);
  if (local.error) console.log(`  local: ${local.error}`);
  if (remote.error) console.log(`  service: ${remote.error}`);
  if (serviceDied) {
    console.log(`  the service died during this query:\n${service.log().slice(-2000)}`);
    await service.stop().catch(() => undefined);
    service = await startService(['--memory', '2GiB']);
  }
}
await service.stop();

const total = (side: 'local' | 'remote') => reports.reduce((sum, r) => ({ passed: sum.passed + r[side].passed, total: sum.total + r[side].total }), { passed: 0, total: 0 });
const all = reports.flatMap((r) => r.regressions);
const died = reports.filter((r) => r.serviceDied).map((r) => r.query);
console.log(`\ncases run ${total('local').total} locally, ${total('remote').total} through the service; pass locally ${total('local').passed}, through the service ${total('remote').passed}`);
console.log(`${all.length} case(s) pass locally and not through the service${all.length ? ', by cause:' : ''}`);
for (const group of groupByCause(all)) {
  console.log(`  ${String(group.count).padStart(5)}  ${group.cause}`);
  for (const example of group.examples) console.log(`           e.g. ${example}`);
}
const flaky = reports.flatMap((r) => r.locallyFlaky);
const reasons = new Map<string, FlakyCase[]>();
for (const found of flaky) reasons.set(found.reason, [...(reasons.get(found.reason) ?? []), found]);
for (const [reason, cases] of reasons) {
  console.log(`${cases.length} more passed locally only by chance (locally flaky, not counted): ${reason}`);
  for (const found of cases.slice(0, 3)) console.log(`           e.g. ${found.name}`);
}
if (died.length) console.log(`the service died in: ${died.join(', ')}`);
if (args.json) writeFileSync(args.json, JSON.stringify({ reports, causes: groupByCause(all), locallyFlaky: [...reasons].map(([reason, cases]) => ({ reason, count: cases.length })) }, null, 2));
process.exit(all.length > 0 || died.length > 0 || total('local').passed === 0 ? 1 : 0);
