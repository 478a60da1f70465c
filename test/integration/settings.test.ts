/**
 * The settings file between the desktop app's settings module and a real
 * `salus serve`: what the app saves is what the service starts with; flags
 * override the file; a bad knob or level in it is a warning, not a dead
 * service; and `--log-level` filters the log.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SettingsStore } from '../../core/platform/settingsFile.js';
import { until } from '../helpers/rawSocket.js';
import { startService, type TestService } from '../helpers/service.js';

const MiB = 1024 * 1024;
let dir: string;
let file: string;
let service: TestService | null = null;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'salus-settings-'));
  file = join(dir, 'config', 'salus', 'config.json');
});
afterEach(async () => {
  await service?.stop();
  service = null;
  rmSync(dir, { recursive: true, force: true });
});

describe('the settings file and salus serve', () => {
  it('starts the service with what the app saved, and the app reads back what the service runs', async () => {
    // As the desktop app saves a policy change (electron/serviceClient.ts) and the user's service options.
    SettingsStore.load(file).update({
      policy: { name: 'SRTF', params: { holdMs: 250, defaultIterationMs: 40 } },
      service: { memory: '96MiB', http: '127.0.0.1:0', logLevel: 'info' },
    });
    service = await startService([], { SALUS_CONFIG: file });
    const policy = await service.json<{ name: string; params: Record<string, unknown> }>(['policy']);
    expect(policy.name).toBe('SRTF');
    expect(policy.params).toMatchObject({ holdMs: 250, defaultIterationMs: 40 });
    expect((await service.json<{ capacityBytes: number }>(['memory'])).capacityBytes).toBe(96 * MiB);
    await until(() => /salus: panel at http:\/\/127\.0\.0\.1:\d+\//.exec(service!.log()), 'the panel from the file’s http address');

    // The service's answer, saved as the app saves it, reads back the same.
    const store = SettingsStore.load(file);
    store.update({ policy: { name: 'SRTF', params: policy.params as Record<string, number | boolean> } });
    expect(SettingsStore.load(file).get().policy).toEqual({ name: 'SRTF', params: policy.params });
  });

  it('lets flags override the file, and starts anyway with a warning for knobs the policy lacks', async () => {
    SettingsStore.load(file).update({ policy: { name: 'FAIR', params: { holdMs: 30 } }, service: { memory: '96MiB', logLevel: 'warn' } });
    service = await startService(['--policy', 'PACK', '--memory', '64MiB', '--log-level', 'info'], { SALUS_CONFIG: file });
    const policy = await service.json<{ name: string; params: Record<string, unknown> }>(['policy']);
    expect(policy.name).toBe('PACK');
    // FAIR's saved knobs are not PACK's: PACK starts with its own defaults.
    expect(policy.params.holdMs).not.toBe(30);
    expect((await service.json<{ capacityBytes: number }>(['memory'])).capacityBytes).toBe(64 * MiB);
    await service.stop();

    SettingsStore.load(file).update({ policy: { name: 'FIFO', params: { noSuchKnob: 3 } } });
    service = await startService([], { SALUS_CONFIG: file });
    expect((await service.json<{ name: string }>(['policy'])).name).toBe('FIFO');
    await until(() => service!.log().includes('salus: warning: ignored the saved knobs of FIFO: Unknown knob "noSuchKnob"'), 'the warning');
    // The file's level is warn: the service's info lines (a job connecting, the GPU) are left out.
    expect(service.log()).not.toMatch(/salus: GPU /);
  });
});
