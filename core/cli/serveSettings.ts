/**
 * `salus serve`'s options from its flags over the settings file
 * (core/platform/settingsFile.ts): a flag given wins, else the file's value,
 * else the built-in default. A problem with the file is a warning in the log;
 * the service starts anyway.
 */
import { parseGpuMemory } from '../platform/gpuId.js';
import { createLogger, LOG_LEVELS, type LogLevel } from '../platform/logger.js';
import { SettingsStore } from '../platform/settingsFile.js';
import type { ServeOptions } from './serve.js';

/** The flags of `salus serve` this file has defaults for. */
export interface ServeFlags {
  http?: string;
  memory?: string;
  policy?: string;
  'jobs-dir'?: string;
  'log-level'?: string;
  'log-file'?: string;
}

/** The options `flags` and the settings in `settingsFile` give (absent: the user's file). */
export function serveSettings(flags: ServeFlags, settingsFile?: string): Pick<ServeOptions, 'http' | 'memory' | 'policy' | 'params' | 'jobsDir' | 'logger'> {
  const level = flags['log-level']?.toLowerCase();
  if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel)) {
    throw new Error(`salus: --log-level must be one of ${LOG_LEVELS.join(', ')}, got '${flags['log-level']}'`);
  }
  const store = SettingsStore.load(settingsFile);
  const { service, policy } = store.get();
  const logger = createLogger({ level: (level as LogLevel | undefined) ?? service.logLevel, file: flags['log-file'] });
  for (const problem of store.problems) logger.warn(`salus: ${problem}`);
  logger.debug(`salus: settings from ${store.file}`);
  const memory = flags.memory ?? service.memory ?? undefined;
  // The saved knobs belong to the saved policy: another policy on the command line starts with its own defaults.
  const policyName = flags.policy ?? policy?.name;
  const samePolicy = policy && policyName?.toUpperCase() === policy.name;
  return {
    http: flags.http ?? service.http ?? undefined,
    memory: memory === undefined ? undefined : parseGpuMemory(memory),
    policy: policyName,
    params: samePolicy ? policy.params : undefined,
    jobsDir: flags['jobs-dir'] ?? service.jobsDir ?? undefined,
    logger,
  };
}
