/**
 * The desktop app's settings: window bounds, the user's policy and its knobs,
 * and service options, in one JSON file in Electron's userData folder. Every
 * section is validated on load; a section that fails keeps its default (and is
 * named in `problems`), and a file that is not JSON at all is set aside as
 * `<file>.invalid` rather than overwritten unread. Writes are atomic (temp file
 * and rename), so a crash mid-write leaves the old file whole.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { POLICY_NAMES, type PolicyName, type PolicyParamValue } from '../core/protocol/state.js';

/** Where the window was, in screen coordinates (x and y absent: let the OS place it). */
export interface WindowBounds {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

/** The policy to start the service with, and the knobs to apply once it listens. */
export interface PolicySettings {
  name: PolicyName;
  params: Record<string, PolicyParamValue>;
}

/** Options of the supervised `salus serve`. */
export interface ServiceSettings {
  /** `--memory SIZE` (bytes or a number with KiB, MiB, GiB, TiB), or null to detect. */
  memory: string | null;
}

export interface Settings {
  window: WindowBounds | null;
  policy: PolicySettings | null;
  service: ServiceSettings;
}

/** Settings of a first start. */
export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({ window: null, policy: null, service: { memory: null } });

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

const serviceSchema = z.object({
  memory: z.string().regex(/^\d+(\.\d+)?\s*(B|KiB|MiB|GiB|TiB)?$/i, 'a size such as 8GiB').nullable().default(null),
}).strict();

const sections = { window: windowSchema.nullable(), policy: policySchema.nullable(), service: serviceSchema } as const;

/** A settings file, loaded and validated; `update` writes it back. */
export class SettingsStore {
  private current: Settings;

  private constructor(readonly file: string, settings: Settings, readonly problems: readonly string[]) {
    this.current = settings;
  }

  /** Reads `file` (absent: defaults). Never throws for bad content; see `problems`. */
  static load(file: string): SettingsStore {
    const { settings, problems } = readSettings(file);
    return new SettingsStore(file, settings, problems);
  }

  /** A copy of the settings now. */
  get(): Settings {
    return structuredClone(this.current);
  }

  /** Replaces the given sections after validating them; throws (writing nothing) if one is invalid. */
  update(patch: Partial<Settings>): Settings {
    const next = { ...this.current };
    for (const key of Object.keys(patch) as (keyof Settings)[]) {
      const result = sections[key].safeParse(patch[key]);
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
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}
