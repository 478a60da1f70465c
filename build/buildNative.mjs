#!/usr/bin/env node
// Builds the shared-memory addon (native/shm, core/platform/sharedMemory.ts) with npm's own
// node-gyp, at `npm install`/`npm ci` and by `npm run build:native`. Linux only. A failed
// build fails nothing: the service and jobs then move bulk bytes with plain file reads and
// writes (one copy more), and say so in the service's log.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'native', 'shm');

if (process.platform !== 'linux') {
  console.log(`salus: no shared-memory addon on ${process.platform}; bulk bytes go through plain files`);
  process.exit(0);
}
// npm hands its node-gyp to lifecycle scripts (npm_config_node_gyp); run by hand, take npm's own copy.
const npmGyp = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
const gyp = process.env.npm_config_node_gyp ?? (existsSync(npmGyp) ? npmGyp : null);
if (!gyp) {
  console.log('salus: node-gyp not found (run `npm run build:native`); bulk bytes go through plain files');
  process.exit(0);
}
const result = spawnSync(process.execPath, [gyp, 'rebuild', '--directory', dir], { stdio: 'inherit' });
if (result.status !== 0) {
  console.log(`salus: the shared-memory addon did not build (node-gyp exited ${result.status ?? result.signal}); bulk bytes go through plain files`);
}
