/**
 * Bench wrapper job: runs an example job unmodified and stamps each JSON line
 * it prints with `t`, the epoch ms at which it was printed
 * (`performance.timeOrigin + now()`). With the example's `--log-every 1` that is
 * the end of every training step (the loss has been read back), so the bench
 * gets per-iteration times from outside the example. Imports nothing of ours;
 * runs under `salus run` and `salus run --local` alike.
 *
 * Usage: `salus run bench/jobs/timed.js -- EXAMPLE [EXAMPLE ARGS...]`
 * (EXAMPLE relative to the working directory).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [example, ...args] = process.argv.slice(2);
if (!example) throw new Error('timed.js: usage: timed.js EXAMPLE [ARGS...]');
const path = resolve(example);

const print = console.log.bind(console);
console.log = (...values) => {
  const t = performance.timeOrigin + performance.now();
  if (values.length === 1 && typeof values[0] === 'string' && values[0].startsWith('{')) {
    try {
      print(JSON.stringify({ t, ...JSON.parse(values[0]) }));
      return;
    } catch {
      // Not JSON after all: print as is.
    }
  }
  print(...values);
};

// The example reads its own arguments from process.argv.
process.argv = [process.argv[0], path, ...args];
print(JSON.stringify({ ev: 'start', t: performance.timeOrigin + performance.now() }));
await import(pathToFileURL(path).href);
