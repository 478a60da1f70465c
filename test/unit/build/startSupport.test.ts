// What `npm start` decides before it runs anything: is the build current, can a window open here.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const support = await import(pathToFileURL(resolve(import.meta.dirname, '../../../build/startSupport.mjs')).href);
const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A project tree with every build source and output, sources at `sourceTime`, outputs at `outputTime` (seconds). */
function tree(sourceTime: number, outputTime: number): string {
  const root = mkdtempSync(join(tmpdir(), 'salus-build-'));
  dirs.push(root);
  const touch = (path: string, time: number) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), 'x');
    utimesSync(join(root, path), time, time);
  };
  for (const source of ['core/cli/main.ts', 'electron/main.ts', 'renderer/src/main.tsx', 'bin/salus.js', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) touch(source, sourceTime);
  for (const output of support.BUILD_OUTPUTS) touch(output, outputTime);
  return root;
}

describe('buildIsCurrent', () => {
  it('is current when every output is newer than every source', () => {
    expect(support.buildIsCurrent(tree(1_000, 2_000))).toBe(true);
  });

  it('is stale when one source deep in a folder changed after the build', () => {
    const root = tree(1_000, 2_000);
    utimesSync(join(root, 'renderer', 'src', 'main.tsx'), 3_000, 3_000);
    expect(support.buildIsCurrent(root)).toBe(false);
  });

  it('is stale when an output is missing, and ignores node_modules and dist inside sources', () => {
    const root = tree(1_000, 2_000);
    mkdirSync(join(root, 'core', 'node_modules'));
    writeFileSync(join(root, 'core', 'node_modules', 'x.js'), 'x');
    utimesSync(join(root, 'core', 'node_modules', 'x.js'), 9_000, 9_000);
    expect(support.buildIsCurrent(root)).toBe(true);
    rmSync(join(root, 'dist', 'renderer', 'index.html'));
    expect(support.buildIsCurrent(root)).toBe(false);
  });
});

describe('where a window can open', () => {
  it('needs $DISPLAY or $WAYLAND_DISPLAY on Linux, nothing on macOS and Windows', () => {
    expect(support.displayProblem({}, 'linux')).toMatch(/no display/);
    expect(support.displayProblem({ DISPLAY: ':0' }, 'linux')).toBeNull();
    expect(support.displayProblem({ WAYLAND_DISPLAY: 'wayland-0' }, 'linux')).toBeNull();
    expect(support.displayProblem({}, 'darwin')).toBeNull();
    expect(support.displayProblem({}, 'win32')).toBeNull();
  });

  it("finds Electron's binary only where it is on disk", () => {
    const dist = mkdtempSync(join(tmpdir(), 'salus-electron-'));
    dirs.push(dist);
    expect(support.electronBinary(undefined, { ELECTRON_OVERRIDE_DIST_PATH: dist })).toBeNull();
    const name = process.platform === 'win32' ? 'electron.exe' : 'electron';
    writeFileSync(join(dist, name), '');
    // path.txt names the platform's executable once the package has downloaded it; absent, the default name.
    expect(support.electronBinary(undefined, { ELECTRON_OVERRIDE_DIST_PATH: dist })).toMatch(/electron(\.exe)?$/);
  });

  it("hides Dawn's Vulkan probing warnings, nothing else", () => {
    expect(support.isDawnNoise('Warning: vkCreateInstance: Found no drivers!')).toBe(true);
    expect(support.isDawnNoise('Warning: loader_get_json: Failed to open JSON file /x.json')).toBe(true);
    expect(support.isDawnNoise('    at CheckVkSuccessImpl (/src/dawn/native/vulkan/VulkanError.cpp:106)')).toBe(true);
    expect(support.isDawnNoise('salus: no GPU driver and no software GPU found.')).toBe(false);
    expect(support.isDawnNoise('Warning: something of ours')).toBe(false);
  });
});
