/**
 * `salus serve --install`: for headless machines, a systemd user unit that runs
 * `salus serve` with the other flags given, restarts it when it fails (a lost
 * GPU exits with code 3 for exactly this), and starts it at login. It writes
 * `$XDG_CONFIG_HOME/systemd/user/salus.service` and says how to enable it; it
 * runs nothing itself.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXIT_NO_GPU } from '../protocol/exitCodes.js';
import { SALUS_CLI_PATH } from '../platform/cliPath.js';


/** The unit's name, for `systemctl --user … salus`. */
export const UNIT_NAME = 'salus.service';

/** One word of `ExecStart=`: quoted when it must be, `%` doubled (systemd expands specifiers). */
function execWord(word: string): string {
  const escaped = word.replace(/%/g, '%%');
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(escaped) ? escaped : `"${escaped.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The unit file's text for `node CLI serve ARGS`. */
export function systemdUnit(options: { nodePath: string; cliPath: string; serveArgs: string[] }): string {
  const command = [options.nodePath, options.cliPath, 'serve', ...options.serveArgs].map(execWord).join(' ');
  return `# Written by \`salus serve --install\`; run it again to change the flags.
[Unit]
Description=Salus: one GPU shared by many deep-learning jobs
Documentation=https://github.com/salus-desktop/salus#readme

[Service]
Type=simple
ExecStart=${command}
# A lost GPU exits with code 3, a crash with another: start again on a fresh device.
Restart=on-failure
RestartSec=2
# No GPU at all (code ${EXIT_NO_GPU}): a restart cannot help until one is installed (see the log).
RestartPreventExitStatus=${EXIT_NO_GPU}
# SwiftShader and the socket want the user's runtime folder; systemd sets XDG_RUNTIME_DIR for user units.

[Install]
WantedBy=default.target
`;
}

/** Flags of `salus serve` whose value is a path: made absolute, since a unit runs in `/`. */
const PATH_FLAGS = new Set(['--socket', '--jobs-dir', '--data-dir', '--log-file']);

/** `salus serve`'s arguments for the unit: without `--install`, paths made absolute. */
export function unitServeArgs(args: string[], cwd = process.cwd()): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--install') continue;
    const [flag, inline] = arg.split(/=(.*)/s, 2);
    if (PATH_FLAGS.has(flag) && inline !== undefined) out.push(`${flag}=${resolve(cwd, inline)}`);
    else if (PATH_FLAGS.has(arg) && i + 1 < args.length) out.push(arg, resolve(cwd, args[++i]));
    else out.push(arg);
  }
  return out;
}

/** Where the user's systemd units go. */
export function userUnitPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'systemd', 'user', UNIT_NAME);
}

/**
 * Writes the unit (a different one already there is kept as `salus.service.bak`)
 * and returns what to tell the user. Throws on a system without systemd's layout.
 */
export function installUserUnit(serveArgs: string[], env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform !== 'linux') {
    throw new Error('salus: --install writes a systemd user unit, which needs Linux; elsewhere run `salus serve` under your own service manager (launchd, a Windows service)');
  }
  const file = userUnitPath(env);
  const text = systemdUnit({ nodePath: process.execPath, cliPath: SALUS_CLI_PATH, serveArgs });
  const before = existsSync(file) ? readFileSync(file, 'utf8') : null;
  const lines: string[] = [];
  if (before === text) {
    lines.push(`salus: ${file} is already this unit; nothing changed.`);
  } else {
    mkdirSync(join(file, '..'), { recursive: true });
    if (before !== null) {
      copyFileSync(file, `${file}.bak`);
      lines.push(`salus: replaced ${file} (the old one is ${file}.bak).`);
    } else {
      lines.push(`salus: wrote ${file}:`);
    }
    writeFileSync(file, text);
    lines.push('', ...text.split('\n').filter((line) => line && !line.startsWith('#')).map((line) => `    ${line}`), '');
  }
  lines.push(
    'Start it now and at every login:',
    '',
    '    systemctl --user daemon-reload',
    `    systemctl --user enable --now ${UNIT_NAME.replace(/\.service$/, '')}`,
    '',
    'Keep it running when you are logged out: `loginctl enable-linger $USER`. Its log: `journalctl --user -u salus -f`.',
  );
  return `${lines.join('\n')}\n`;
}
