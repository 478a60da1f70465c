/** Where the service keeps its data (core/history/dataDir.ts), on each platform. */
import { describe, expect, it } from 'vitest';
import { resolveDataDir } from '../../../core/history/dataDir.js';

describe('resolveDataDir', () => {
  it('takes --data-dir, then $XDG_DATA_HOME, then the platform folder', () => {
    const home = '/home/u';
    expect(resolveDataDir('/x/y', { env: { XDG_DATA_HOME: '/d' }, platform: 'linux', home })).toBe('/x/y');
    expect(resolveDataDir(undefined, { env: { XDG_DATA_HOME: '/d' }, platform: 'linux', home })).toBe('/d/salus');
    expect(resolveDataDir(undefined, { env: {}, platform: 'linux', home })).toBe('/home/u/.local/share/salus');
    expect(resolveDataDir(undefined, { env: {}, platform: 'darwin', home })).toBe('/home/u/Library/Application Support/salus');
    expect(resolveDataDir(undefined, { env: { LOCALAPPDATA: '/l' }, platform: 'win32', home })).toBe('/l/salus');
    expect(resolveDataDir(undefined, { env: {}, platform: 'win32', home })).toBe('/home/u/AppData/Local/salus');
  });
});
