/**
 * A job that runs TensorFlow.js's own test suite — the jasmine specs shipped in
 * `@tensorflow/tfjs-core`'s `dist/` — on TF.js's WebGPU backend, set up as
 * tfjs-backend-webgpu's own test setup does (`setTestEnvs` with its `webgpu`
 * test environment, all chained ops and gradients registered), but without
 * its list of specs known to fail there, and with the specs no backend is
 * named in (io, util, …) as well: every spec tests.js holds. It uses only
 * `navigator.gpu`, so the same file runs on a local device
 * (`salus run --local conformance/tfjs/job.js`) and on the service
 * (`salus run conformance/tfjs/job.js`).
 *
 * Args:
 *   --filter REGEX   only specs whose full name matches (JavaScript RegExp)
 *   --files GLOBS    only these test files, comma-separated globs over the
 *                    paths in tfjs-core's dist/tests.js, e.g. 'ops/conv2d*,ops/mat_mul*'
 *   --out FILE       where to write the per-spec results (JSON lines; see below)
 *   --spec-timeout-ms N  jasmine's timeout per spec (default 20000, as tfjs-core sets it)
 *
 * Appends to --out, as each spec ends, `{"spec": {name, status, message?,
 * durationMs}}` (status: passed, failed or pending; message: the first
 * failure), `{"suiteError": {name, message}}` for a failing beforeAll/afterAll,
 * and last `{"summary": {counts, adaptersRequested, durationMs, ...}}`; a file without the
 * summary line is a run that died on the way. Prints the summary as one line
 * `{"tfjsSuiteSummary": {...}}`. Exits 0 once the suite ran, whatever its specs
 * did; non-zero if it could not run.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const require = createRequire(import.meta.url);
const started = performance.now();

function positive(flag, value) {
  if (!(Number(value) > 0)) throw new Error(`tfjs suite: ${flag} needs a positive number, not ${value}`);
  return Number(value);
}

function parseArgs(argv) {
  const options = { filter: null, files: null, out: null, specTimeoutMs: 20_000 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`tfjs suite: ${flag} needs a value`);
    if (flag === '--filter') options.filter = new RegExp(value);
    else if (flag === '--files') options.files = value.split(',').filter(Boolean);
    else if (flag === '--out') options.out = value;
    else if (flag === '--spec-timeout-ms') options.specTimeoutMs = positive(flag, value);
    else throw new Error(`tfjs suite: unknown argument ${flag}`);
  }
  return options;
}

/** A glob over test paths ('ops/conv2d*', 'ops/**'): `*` stays within a folder, `**` does not. */
function globToRegExp(glob) {
  const body = glob.replace(/\.js$/, '').replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*/g, '\u0000').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]').replace(/\u0000/g, '.*');
  return new RegExp(`^${body}$`);
}

/** The test files tfjs-core's dist/tests.js imports, in its order, as paths like 'ops/add_test'. */
function suiteFiles() {
  const index = require.resolve('@tensorflow/tfjs-core/dist/tests.js');
  const text = readFileSync(index, 'utf8');
  return [...text.matchAll(/^import '\.\/(.+)';$/gm)].map((m) => m[1]);
}

/** Jasmine reporter that counts outcomes and writes each spec's and every suite-level error to `out`. */
function createRecorder(out) {
  const counts = { passed: 0, failed: 0, pending: 0 };
  let suiteErrors = 0;
  const write = (record) => { if (out) appendFileSync(out, `${JSON.stringify(record)}\n`); };
  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });
  const firstMessage = (failures) => failures[0]?.message ?? null;
  const suiteError = (name, message) => {
    suiteErrors++;
    write({ suiteError: { name, message } });
  };
  return {
    counts,
    get suiteErrors() { return suiteErrors; },
    done,
    reporter: {
      specDone(result) {
        if (result.status === 'excluded') return;
        counts[result.status] = (counts[result.status] ?? 0) + 1;
        const spec = { name: result.fullName, status: result.status, durationMs: result.duration ?? null };
        if (result.status === 'failed') spec.message = firstMessage(result.failedExpectations);
        write({ spec });
      },
      suiteDone(result) {
        if (result.failedExpectations.length > 0) suiteError(result.fullName, firstMessage(result.failedExpectations));
      },
      jasmineDone(result) {
        for (const failure of result.failedExpectations) suiteError('(top level)', failure.message);
        resolveDone(result.overallStatus);
      },
    },
  };
}

const options = parseArgs(process.argv.slice(2));
const files = suiteFiles().filter((file) => !options.files || options.files.some((glob) => globToRegExp(glob).test(file)));
if (files.length === 0) throw new Error(`tfjs suite: no test file matches ${options.files}`);

// TF.js's ES module build, loaded as its bundler would (see loader.js).
register('./loader.js', import.meta.url);

// Counted, not changed: TF.js asks for a new adapter each time it re-creates its backend (each describeWithFlags block).
let adaptersRequested = 0;
const requestAdapter = navigator.gpu.requestAdapter.bind(navigator.gpu);
navigator.gpu.requestAdapter = (options) => {
  adaptersRequested++;
  return requestAdapter(options);
};

// Jasmine's globals (describe, it, expect, jasmine), as the `jasmine` runner sets them.
const jasmineRequire = require('jasmine-core');
const jasmine = jasmineRequire.boot(jasmineRequire);
jasmine.DEFAULT_TIMEOUT_INTERVAL = options.specTimeoutMs;
const env = jasmine.getEnv();
if (options.out) writeFileSync(options.out, '');
const recorder = createRecorder(options.out);
env.addReporter(recorder.reporter);
env.configure({ random: false, specFilter: (spec) => !options.filter || options.filter.test(spec.getFullName()) });

// tfjs-backend-webgpu's setup_test.ts, minus its spec filters.
await import('@tensorflow/tfjs-backend-webgpu');
await import('@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops');
await import('@tensorflow/tfjs-core/dist/register_all_gradients');
const { setTestEnvs } = await import('@tensorflow/tfjs-core/dist/jasmine_util');
setTestEnvs([{ name: 'webgpu', backendName: 'webgpu', flags: { WEBGPU_CPU_FORWARD: false }, isDataSync: true }]);
for (const file of files) await import(`@tensorflow/tfjs-core/dist/${file}`);

env.execute();
const overallStatus = await recorder.done;

const summary = {
  tfjsCore: require('@tensorflow/tfjs-core/package.json').version,
  backend: 'webgpu',
  filter: options.filter?.source ?? null,
  files: options.files,
  testFiles: files.length,
  counts: recorder.counts,
  suiteErrors: recorder.suiteErrors,
  overallStatus,
  adaptersRequested,
  durationMs: Math.round(performance.now() - started),
};
if (options.out) appendFileSync(options.out, `${JSON.stringify({ summary })}\n`);
console.log(JSON.stringify({ tfjsSuiteSummary: summary }));
// TF.js keeps its devices (it never destroys them); the suite is over, so end here.
process.exit(0);
