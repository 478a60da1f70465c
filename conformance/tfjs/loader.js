/**
 * Node module hooks (registered with `module.register` by job.js) that load
 * TensorFlow.js's *unbundled* ES module build from its npm packages, which is
 * where tfjs-core ships its jasmine specs (`dist/tests.js` and `dist/**\/*_test.js`).
 *
 * Those files are ES modules written for a bundler, inside packages that Node
 * treats as CommonJS: imports without extensions, `require()` next to `import`,
 * and `import * as x from 'cjs-package'`. So, for files under
 * `node_modules/@tensorflow/<package>/dist/`:
 *
 * - `@tensorflow/<package>[/sub/path]` resolves to that package's ESM build
 *   (`dist/index.js`, or `dist/sub/path.js`), never its CommonJS bundle — the
 *   tests, the WebGPU backend and the job must share one tfjs-core engine;
 * - a relative import without an extension gets `.js` (or `/index.js`);
 * - the file loads as an ES module, with `require` defined when it uses it,
 *   and `import * as x from 'pkg'` of a non-TF.js package reads as a default
 *   import (a CommonJS package's namespace is its `module.exports` there).
 *
 * Nothing else is touched: the tests' code is TF.js's own.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TF_SPECIFIER = /^@tensorflow\/(tfjs-[a-z0-9-]+)(\/.*)?$/;
const TF_DIST_FILE = /\/node_modules\/@tensorflow\/tfjs-[a-z0-9-]+\/dist\/.+\.js$/;
const NAMESPACE_IMPORT = /^import \* as (\w+) from '([^.@'][^']*)';$/gm;
const REQUIRE_PRELUDE = "import { createRequire as __tfjsSuiteCreateRequire } from 'node:module'; const require = __tfjsSuiteCreateRequire(import.meta.url); ";

/** `path` as a file, else `path.js`, else `path/index.js` (the bundler rules TF.js's build assumes). */
function asModuleFile(path) {
  for (const candidate of [path, `${path}.js`, `${path}/index.js`]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** Node's `resolve` hook: see the file comment. */
export async function resolve(specifier, context, nextResolve) {
  const tf = TF_SPECIFIER.exec(specifier);
  if (tf) {
    const manifest = await nextResolve(`@tensorflow/${tf[1]}/package.json`, context);
    const root = dirname(fileURLToPath(manifest.url));
    const sub = tf[2] ?? '/dist/index';
    const file = asModuleFile(`${root}${sub.replace(/\.js$/, '')}`);
    if (file) return { url: pathToFileURL(file).href, format: 'module', shortCircuit: true };
  }
  if (specifier.startsWith('.') && context.parentURL && TF_DIST_FILE.test(context.parentURL)) {
    const file = asModuleFile(fileURLToPath(new URL(specifier, context.parentURL)));
    if (file) return { url: pathToFileURL(file).href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** Node's `load` hook: see the file comment. */
export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TF_DIST_FILE.test(url)) return nextLoad(url, context);
  let source = readFileSync(fileURLToPath(url), 'utf8').replace(NAMESPACE_IMPORT, "import $1 from '$2';");
  // On the first line, so that stack traces keep their line numbers.
  if (/\brequire\(/.test(source)) source = REQUIRE_PRELUDE + source;
  return { format: 'module', source, shortCircuit: true };
}
