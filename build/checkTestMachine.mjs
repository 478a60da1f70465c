#!/usr/bin/env node
// @ts-check
/**
 * `npm test`'s check of the machine, after the build and before the tests: the
 * integration tests need a WebGPU adapter (a GPU driver, or SwiftShader from
 * Debian's `chromium`) and the browser tests need Chromium. When one is
 * missing it prints the one command that installs it and exits 1, instead of
 * a hundred failing tests and a Vulkan error.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, withRuntimeDir } from './startSupport.mjs';

const gpuModule = pathToFileURL(join(ROOT, 'dist', 'core', 'platform', 'gpu.js')).href;
const { SOFTWARE_GPU_INSTALL_COMMAND } = await import(gpuModule);

// In a child process: Dawn prints its own Vulkan warnings on stderr while it looks, and they are no help here.
const probe = spawnSync(process.execPath, ['--input-type=module', '-e', `
  const { openAdapter } = await import(${JSON.stringify(gpuModule)});
  try { const { adapter } = await openAdapter(); console.log(JSON.stringify({ device: adapter.info.device || adapter.info.description })); process.exit(0); }
  catch (error) { console.log(JSON.stringify({ error: error.message })); process.exit(1); }
`], { env: withRuntimeDir(process.env), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 60_000 });

const problems = [];
let answer = null;
try {
  answer = JSON.parse(probe.stdout.trim().split('\n').at(-1) ?? '');
} catch {
  // The probe crashed; reported below.
}
if (!answer?.device) problems.push(answer?.error ?? `the WebGPU probe failed (exit ${probe.status}${probe.signal ? `, ${probe.signal}` : ''})`);

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  problems.push(`no Chromium at ${chromium} for the panel's browser tests (set CHROMIUM_PATH to another Chromium). On Debian and Ubuntu:\n\n    ${SOFTWARE_GPU_INSTALL_COMMAND}\n`);
}

if (problems.length > 0) {
  process.stderr.write(`npm test: this machine cannot run the tests yet:\n\n${problems.join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(`npm test: WebGPU adapter: ${answer.device}; Chromium: ${chromium}\n`);
