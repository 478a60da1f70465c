/**
 * The service's log: lines with a level, to stderr and optionally to a file
 * that rotates by size (the desktop app's, in the user's log folder). On stderr
 * an info line reads as it always did (`salus: …`), the others name their level
 * (`salus: warning: …`); in the file every line starts with its time and level.
 */
import { closeSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { LOG_LEVELS, type LogLevel } from './settingsFile.js';

export { LOG_LEVELS, type LogLevel };

/** A logger; lines below its level are dropped. */
export interface Logger {
  readonly level: LogLevel;
  error(line: string): void;
  warn(line: string): void;
  info(line: string): void;
  debug(line: string): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Where stderr lines go (tests pass their own). */
  write?: (text: string) => void;
  /** Also append to this file, rotated. */
  file?: string;
  /** The file is rotated before it grows past this. Default 5 MiB. */
  maxFileBytes?: number;
  /** Rotated files kept beside it (`file.1` is the newest). Default 3. */
  keepFiles?: number;
}

const STDERR_TAG: Record<LogLevel, string> = { error: 'error: ', warn: 'warning: ', info: '', debug: 'debug: ' };

/** `salus: x` → `salus: warning: x`; lines without the prefix get the tag in front. */
function tagged(level: LogLevel, line: string): string {
  const tag = STDERR_TAG[level];
  if (!tag) return line;
  return line.startsWith('salus: ') ? `salus: ${tag}${line.slice(7)}` : `${tag}${line}`;
}

/** An append-only file that rolls over to `file.1` … `file.N` by size. */
export class RotatingFile {
  private fd: number;
  private sizeBytes: number;

  constructor(readonly file: string, private readonly maxBytes = 5 * 1024 * 1024, private readonly keep = 3) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.fd = openSync(file, 'a', 0o600);
    this.sizeBytes = statSync(file).size;
  }

  /** Appends `text`, rotating first when it would pass the limit. */
  write(text: string): void {
    const bytes = Buffer.byteLength(text);
    if (this.sizeBytes > 0 && this.sizeBytes + bytes > this.maxBytes) this.rotate();
    writeSync(this.fd, text);
    this.sizeBytes += bytes;
  }

  close(): void {
    closeSync(this.fd);
  }

  private rotate(): void {
    closeSync(this.fd);
    rmSync(`${this.file}.${this.keep}`, { force: true });
    for (let n = this.keep - 1; n >= 1; n--) {
      try {
        renameSync(`${this.file}.${n}`, `${this.file}.${n + 1}`);
      } catch {
        // Fewer rotated files than kept so far.
      }
    }
    renameSync(this.file, `${this.file}.1`);
    this.fd = openSync(this.file, 'a', 0o600);
    this.sizeBytes = 0;
  }
}

/** A logger at `level` (default info) to stderr and, with `file`, to a rotating file. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  const threshold = LOG_LEVELS.indexOf(level);
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  let file: RotatingFile | null = options.file ? new RotatingFile(options.file, options.maxFileBytes, options.keepFiles) : null;
  const log = (lineLevel: LogLevel) => (line: string) => {
    if (LOG_LEVELS.indexOf(lineLevel) > threshold) return;
    write(`${tagged(lineLevel, line)}\n`);
    if (!file) return;
    try {
      file.write(`${new Date().toISOString()} ${lineLevel.padEnd(5)} ${line}\n`);
    } catch (error) {
      // A full disk or a removed folder must not take the service down: say so once, keep stderr.
      file = null;
      write(`salus: warning: stopped writing the log file: ${(error as Error).message}\n`);
    }
  };
  return { level, error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug') };
}
