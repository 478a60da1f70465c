/**
 * `salus serve --install` writes a systemd user unit that runs the service with
 * the flags given (paths made absolute), restarts it on failure, and says how
 * to enable it. The real CLI in a temp config folder; systemd-analyze checks the
 * unit where it is installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemdUnit } from '../../core/cli/installUnit.js';
import { requireBuild, SALUS_BIN } from '../helpers/service.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-unit-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function install(args: string[]) {
  return spawnSync(process.execPath, [SALUS_BIN, 'serve', '--install', ...args], {
    cwd: dir, env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') }, encoding: 'utf8', timeout: 30_000,
  });
}

describe.runIf(process.platform === 'linux')('salus serve --install', () => {
  it('writes a unit that runs salus serve with the given flags and restarts it on failure', () => {
    requireBuild();
    const result = install(['--http', '9400', '--jobs-dir', 'jobs', '--log-file=logs/service.log']);
    expect(result.status, result.stderr).toBe(0);
    const file = join(dir, 'config', 'systemd', 'user', 'salus.service');
    const unit = readFileSync(file, 'utf8');
    expect(unit).toContain(`ExecStart=${process.execPath} ${SALUS_BIN} serve --http 9400 --jobs-dir ${join(dir, 'jobs')} --log-file=${join(dir, 'logs', 'service.log')}\n`);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^RestartPreventExitStatus=4$/m);
    expect(unit).toMatch(/^WantedBy=default\.target$/m);
    expect(result.stdout).toContain(`salus: wrote ${file}`);
    expect(result.stdout).toContain('systemctl --user enable --now salus');
    // It installs and tells; it does not start a service.
    expect(result.stdout).not.toContain('listening on');

    const verify = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
    if (!verify.error) expect(verify.status, verify.stderr).toBe(0);

    // Again with the same flags: nothing changes; with others: replaced, the old one kept.
    expect(install(['--http', '9400', '--jobs-dir', 'jobs', '--log-file=logs/service.log']).stdout).toContain('already this unit; nothing changed');
    const changed = install(['--policy', 'SRTF']);
    expect(changed.stdout).toContain(`replaced ${file} (the old one is ${file}.bak)`);
    expect(readFileSync(file, 'utf8')).toContain(' serve --policy SRTF\n');
    expect(existsSync(`${file}.bak`)).toBe(true);
  });

  it('quotes words systemd would split and doubles % (a specifier there)', () => {
    const unit = systemdUnit({ nodePath: '/opt/node 20/bin/node', cliPath: '/srv/salus/bin/salus.js', serveArgs: ['--jobs-dir', '/data/100% "jobs"'] });
    expect(unit).toContain('ExecStart="/opt/node 20/bin/node" /srv/salus/bin/salus.js serve --jobs-dir "/data/100%% \\"jobs\\""\n');
  });
});
