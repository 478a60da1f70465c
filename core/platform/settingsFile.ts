/**
 * The settings file: `salus serve`'s defaults and the desktop app's settings,
 * one JSON file both read and write (`$SALUS_CONFIG`, else
 * `$XDG_CONFIG_HOME/salus/config.json`, `~/Library/Application
 * Support/salus/config.json` on macOS, `%APPDATA%\salus\config.json` on
 * Windows). Flags of `salus serve` override it; the app writes the policy and
 * its knobs whenever the user changes them, and its window bounds.
 *
 * Every section is checked with zod on load; a section that fails keeps its
 * default (and is named in `problems`), and a file that is not JSON at all is
 * set aside as `<file>.invalid` rather than overwritten unread. Writes are
 * atomic (temp file and rename), so a crash mid-write leaves the old file whole.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { parseGpuMemory } from './gpuId.js';
import { POLICY_NAMES, type PolicyName, type PolicyParamValue } from '../protocol/state.js';

/** Where the window was, in screen coordinates (x and y absent: let the OS place it). */
export interface WindowBounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

/** The policy to start the service with, and its knobs. */
export interface PolicySettings {
  name: PolicyName;
  params: Record<string, PolicyParamValue>;
}

/** How chatty the service's log is: each level includes the ones before it. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Defaults of `salus serve` (each null: its flag's own default). */
export interface ServiceSettings {
  /** GPU memory capacity (`--memory SIZE` for every GPU, or `gpu0=SIZE,…` for each), or null to detect. */
  memory: string | null;
  /** The web panel's `[HOST:]PORT` (`--http`), or null for none. */
  http: string | null;
  /** Where uploaded job files go (`--jobs-dir`), or null for `$XDG_DATA_HOME/salus/jobs`. */
  jobsDir: string | null;
  /** `--log-level`. */
  logLevel: LogLevel;
}

export interface Settings {
  window: WindowBounds | null;
  policy: PolicySettings | null;
  service: ServiceSettings;
}

/** Settings of a first start. */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  window: null, policy: null, service: { memory: null, http: null, jobsDir: null, logLevel: 'info' as LogLevel },
});

/** A change to the settings: whole sections, except `service`, whose fields given replace those saved. */
export type SettingsPatch = Partial<Omit<Settings, 'service'>> & { service?: Partial<ServiceSettings> };

const coordinate = z.number().int().min(-100_000).max(100_000);
const windowSchema = z.object({
  x: coordinate.optional(),
  y: coordinate.optional(),
  width: z.number().int().min(320).max(100_000),
  height: z.number().int().min(240).max(100_000),
  maximized: z.boolean().default(false),
}).strict();

const policySchema = z.object({
  name: z.enum(POLICY_NAMES),
  params: z.record(z.string().min(1).max(64), z.union([z.number().finite(), z.boolean()])).default({}),
}).strict();

/** `--memory`'s value: a size, or sizes by GPU (`gpu0=40GiB,gpu1=20GiB`). */
const gpuMemory = z.string().refine((text) => {
  try {
    parseGpuMemory(text);
    return true;
  } catch {
    return false;
  }
}, 'a size such as 8GiB, 512MiB or a number of bytes, or sizes by GPU such as gpu0=8GiB,gpu1=4GiB');

const serviceSchema = z.object({
  memory: gpuMemory.nullable().default(null),
  http: z.string().regex(/^(?:(?:\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):)?\d{1,5}$/, '[HOST:]PORT, e.g. 9400 or 127.0.0.1:9400').nullable().default(null),
  jobsDir: z.string().min(1).nullable().default(null),
  logLevel: z.enum(LOG_LEVELS).default('info'),
}).strict();

const sections = { window: windowSchema.nullable(), policy: policySchema.nullable(), service: serviceSchema } as const;

/** What the file's location depends on (the current process's by default). */
export interface SettingsContext {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
}

/** The settings file of this user (see the module comment). */
export function settingsFilePath(context: SettingsContext = { platform: process.platform, env: process.env, home: homedir() }): string {
  const { platform, env, home } = context;
  if (env.SALUS_CONFIG) return env.SALUS_CONFIG;
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'salus', 'config.json');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'salus', 'config.json');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'salus', 'config.json');
}

/** A settings file, loaded and validated; `update` writes it back. */
export class SettingsStore {
  private current: Settings;

  private constructor(readonly file: string, settings: Settings, readonly problems: readonly string[]) {
    this.current = settings;
  }

  /**
   * Reads `file` (absent: defaults). When `file` does not exist but
   * `legacyFile` does (the desktop app's own file from before there was one for
   * both), its settings are copied into `file` first, so that a service started
   * from `file` starts the same way. Never throws for bad content; see `problems`.
   */
  static load(file: string = settingsFilePath(), legacyFile?: string): SettingsStore {
    if (legacyFile && !existsSync(file) && existsSync(legacyFile)) {
      const { settings, problems } = readSettings(legacyFile);
      const store = new SettingsStore(file, settings, problems);
      store.update({});
      return store;
    }
    const { settings, problems } = readSettings(file);
    return new SettingsStore(file, settings, problems);
  }

  /** A copy of the settings now. */
  get(): Settings {
    return structuredClone(this.current);
  }

  /** Applies `patch` after validating it; throws (writing nothing) if a section is invalid. */
  update(patch: SettingsPatch): Settings {
    const next = { ...this.current };
    for (const key of Object.keys(patch) as (keyof Settings)[]) {
      const value = key === 'service' ? { ...this.current.service, ...patch.service } : patch[key];
      const result = sections[key].safeParse(value);
      if (!result.success) throw new Error(`settings.${key}: ${result.error.issues[0]?.message ?? 'invalid'}`);
      (next as Record<string, unknown>)[key] = result.data;
    }
    this.current = next;
    writeAtomically(this.file, `${JSON.stringify({ version: 1, ...next }, null, 2)}\n`);
    return this.get();
  }
}

function readSettings(file: string): { settings: Settings; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { settings: structuredClone(DEFAULT_SETTINGS), problems: missing ? [] : [`cannot read ${file}: ${(error as Error).message}`] };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('not a JSON object');
  } catch (error) {
    // Keep the unreadable file for the user to look at; the next write starts afresh.
    try {
      renameSync(file, `${file}.invalid`);
    } catch {
      // Read-only folder: the defaults still apply.
    }
    return { settings: structuredClone(DEFAULT_SETTINGS), problems: [`${file} is not valid settings (${(error as Error).message}); moved it to ${file}.invalid and started from defaults`] };
  }
  const settings: Record<string, unknown> = structuredClone(DEFAULT_SETTINGS);
  const problems: string[] = [];
  for (const key of Object.keys(sections) as (keyof Settings)[]) {
    const value = (raw as Record<string, unknown>)[key];
    if (value === undefined) continue;
    const result = sections[key].safeParse(value);
    if (result.success) settings[key] = result.data;
    else problems.push(`${file}: ignored "${key}": ${result.error.issues.map((i) => `${i.path.join('.') || key}: ${i.message}`).join('; ')}`);
  }
  return { settings: settings as unknown as Settings, problems };
}

function writeAtomically(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}
