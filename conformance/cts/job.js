// Runs one query of WebGPU's Conformance Test Suite (CTS) as a Salus job: its
// `navigator.gpu` is the service's remote GPU under `salus run`, or a local device
// under `salus run --local`. The CTS's command-line runner wants the checkout as
// its working folder and reads its arguments when it loads, so both are set first.
//
// node: salus run [--local] conformance/cts/job.js -- CTS_DIR [CTS runner options] QUERY
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const [ctsDir, ...ctsArgs] = process.argv.slice(2);
if (!ctsDir) {
  console.error('usage: salus run conformance/cts/job.js -- CTS_DIR [--print-json] QUERY');
  process.exit(2);
}
const runner = join(resolve(ctsDir), 'out-node', 'common', 'runtime', 'cmdline.js');
process.chdir(resolve(ctsDir));
// The runner ends with process.exit, which drops what a pipe has not taken yet (its results, printed last):
// exit once stdout has written everything.
const exit = process.exit.bind(process);
process.exit = (code) => {
  process.exitCode = code;
  process.stdout.write('', () => exit(code));
};
process.argv = [process.argv[0], runner, ...ctsArgs];
createRequire(import.meta.url)(runner);
