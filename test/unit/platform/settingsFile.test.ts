// The settings file shared by the desktop app and `salus serve`, on real files:
// where it lives, round trips, defaults, and garbage refused without losing what
// was valid or the user's file.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, SettingsStore, settingsFilePath } from '../../../core/platform/settingsFile.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'salus-settings-'));
  file = join(dir, 'nested', 'settings.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('SettingsStore', () => {
  it('starts from defaults when there is no file', () => {
    const store = SettingsStore.load(file);
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    expect(store.problems).toEqual([]);
  });

  it('round-trips bounds, policy, knobs and service options through the file', () => {
    const store = SettingsStore.load(file);
    store.update({ window: { x: -1200, y: 40, width: 1400, height: 900, maximized: true } });
    store.update({ policy: { name: 'SRTF', params: { holdMs: 500, workConserving: true } }, service: { memory: '8GiB' } });
    const again = SettingsStore.load(file);
    expect(again.problems).toEqual([]);
    expect(again.get()).toEqual({
      window: { x: -1200, y: 40, width: 1400, height: 900, maximized: true },
      policy: { name: 'SRTF', params: { holdMs: 500, workConserving: true } },
      service: { memory: '8GiB', http: null, jobsDir: null, logLevel: 'info' },
    });
    expect(JSON.parse(readFileSync(file, 'utf8')).version).toBe(1);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('changes only the service fields given, keeping the others saved', () => {
    const store = SettingsStore.load(file);
    store.update({ service: { http: '127.0.0.1:9400', jobsDir: '/srv/jobs', logLevel: 'debug' } });
    store.update({ service: { memory: '512MB' } });
    expect(SettingsStore.load(file).get().service).toEqual({ memory: '512MB', http: '127.0.0.1:9400', jobsDir: '/srv/jobs', logLevel: 'debug' });
  });

  it('keeps a memory size for each GPU, as salus serve --memory takes it', () => {
    const store = SettingsStore.load(file);
    store.update({ service: { memory: 'gpu0=40GiB,gpu1=20GiB' } });
    expect(SettingsStore.load(file).get().service.memory).toBe('gpu0=40GiB,gpu1=20GiB');
    expect(() => store.update({ service: { memory: 'gpuX=1GiB' } })).toThrow();
  });

  it("imports the desktop app's file of before once, so the service reads the same, and never writes it", () => {
    const legacy = join(dir, 'userData', 'settings.json');
    SettingsStore.load(legacy).update({ policy: { name: 'FAIR', params: { holdMs: 20 } } });
    const store = SettingsStore.load(file, legacy);
    expect(store.get().policy).toEqual({ name: 'FAIR', params: { holdMs: 20 } });
    // What `salus serve` reads (the new file alone) already says so.
    expect(SettingsStore.load(file).get().policy).toEqual({ name: 'FAIR', params: { holdMs: 20 } });
    SettingsStore.load(legacy).update({ policy: { name: 'PACK', params: {} } });
    expect(SettingsStore.load(file, legacy).get().policy?.name).toBe('FAIR');
    const legacyText = readFileSync(legacy, 'utf8');
    store.update({ service: { memory: '1GiB' } });
    expect(readFileSync(legacy, 'utf8')).toBe(legacyText);
  });

  it('lives in the platform config folder, or at $SALUS_CONFIG', () => {
    expect(settingsFilePath({ platform: 'linux', env: {}, home: '/home/ada' })).toBe('/home/ada/.config/salus/config.json');
    expect(settingsFilePath({ platform: 'linux', env: { XDG_CONFIG_HOME: '/cfg' }, home: '/home/ada' })).toBe('/cfg/salus/config.json');
    expect(settingsFilePath({ platform: 'darwin', env: {}, home: '/Users/ada' })).toBe('/Users/ada/Library/Application Support/salus/config.json');
    expect(settingsFilePath({ platform: 'win32', env: { APPDATA: 'C:\\Users\\ada\\AppData\\Roaming' }, home: 'C:\\Users\\ada' })).toMatch(/Roaming[\\/]salus[\\/]config\.json$/);
    expect(settingsFilePath({ platform: 'linux', env: { SALUS_CONFIG: '/etc/salus.json', XDG_CONFIG_HOME: '/cfg' }, home: '/h' })).toBe('/etc/salus.json');
  });

  it('hands out copies: changing one does not change the store', () => {
    const store = SettingsStore.load(file);
    store.update({ policy: { name: 'FAIR', params: {} } });
    store.get().policy!.params.sneaky = 1;
    expect(store.get().policy!.params).toEqual({});
  });

  it('sets a file that is not JSON aside and starts from defaults', () => {
    writeFileSync(join(dir, 'settings.json'), '{"window": {"width": 1000,');
    const store = SettingsStore.load(join(dir, 'settings.json'));
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    expect(store.problems[0]).toMatch(/is not valid settings .*moved it to .*settings\.json\.invalid/);
    expect(readFileSync(join(dir, 'settings.json.invalid'), 'utf8')).toBe('{"window": {"width": 1000,');
    expect(existsSync(join(dir, 'settings.json'))).toBe(false);
  });

  it.each([['an array', '[1,2]'], ['a string', '"hello"'], ['null', 'null']])('refuses %s as the whole file', (_what, text) => {
    writeFileSync(join(dir, 'settings.json'), text);
    const store = SettingsStore.load(join(dir, 'settings.json'));
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    expect(store.problems).toHaveLength(1);
  });

  it('drops only the sections that are garbage, naming them', () => {
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({
      window: { width: 'wide', height: 900 },
      policy: { name: 'SRTF', params: { holdMs: 250 } },
      service: { memory: 'lots', sneaky: true },
      unknownSection: 42,
    }));
    const store = SettingsStore.load(join(dir, 'settings.json'));
    expect(store.get()).toEqual({ window: null, policy: { name: 'SRTF', params: { holdMs: 250 } }, service: DEFAULT_SETTINGS.service });
    expect(store.problems).toHaveLength(2);
    expect(store.problems[0]).toMatch(/ignored "window": width:/);
    expect(store.problems[1]).toMatch(/ignored "service"/);
  });

  it.each([
    ['a policy that does not exist', { policy: { name: 'YOLO', params: {} } }],
    ['a knob that is a string', { policy: { name: 'FIFO', params: { holdMs: '10' } } }],
    ['a window too small to use', { window: { width: 10, height: 10, maximized: false } }],
    ['a size that is not one', { service: { memory: '-3 lightyears' } }],
    ['an address that is not [HOST:]PORT', { service: { http: 'http://x:80/' } }],
    ['a log level that does not exist', { service: { logLevel: 'chatty' } }],
  ])('refuses to save %s, leaving the file as it was', (_what, patch) => {
    const store = SettingsStore.load(file);
    store.update({ policy: { name: 'PACK', params: { maxLanes: 2 } } });
    const before = readFileSync(file, 'utf8');
    expect(() => store.update(patch as never)).toThrow(/^settings\./);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(store.get().policy).toEqual({ name: 'PACK', params: { maxLanes: 2 } });
  });
});
