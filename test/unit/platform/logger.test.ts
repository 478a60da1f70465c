// The service's log: levels on stderr, and a file that rotates by size, on real files.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/platform/logger.js';

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-log-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('createLogger', () => {
  it('writes its level and those above it, info lines as they always read, the others tagged', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', write: (text) => lines.push(text) });
    logger.debug('salus: d');
    logger.info('salus: i');
    logger.warn('salus: w');
    logger.error('salus: e');
    expect(lines).toEqual(['salus: warning: w\n', 'salus: error: e\n']);
    const chatty: string[] = [];
    const debug = createLogger({ level: 'debug', write: (text) => chatty.push(text) });
    debug.info('salus: listening');
    debug.debug('plain');
    expect(chatty).toEqual(['salus: listening\n', 'debug: plain\n']);
  });

  it('also appends to a file with time and level, rotating it by size and keeping the newest files', () => {
    const file = join(dir, 'logs', 'service.log');
    const logger = createLogger({ level: 'info', write: () => {}, file, maxFileBytes: 200, keepFiles: 2 });
    for (let i = 0; i < 12; i++) logger.info(`salus: line ${String(i).padStart(2, '0')} ${'x'.repeat(40)}`);
    const current = readFileSync(file, 'utf8');
    expect(current).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info  salus: line \d\d x+\n/);
    expect(current).toContain('salus: line 11');
    expect(Buffer.byteLength(current)).toBeLessThanOrEqual(200);
    expect(readFileSync(`${file}.1`, 'utf8')).not.toContain('salus: line 11');
    expect(existsSync(`${file}.2`)).toBe(true);
    expect(existsSync(`${file}.3`)).toBe(false);
    // Nothing lost between the three files but what rotated out of the oldest.
    const all = [`${file}.2`, `${file}.1`, file].map((f) => readFileSync(f, 'utf8')).join('');
    const numbers = [...all.matchAll(/line (\d\d)/g)].map((m) => Number(m[1]));
    expect(numbers).toEqual(numbers.map((_, i) => numbers[0] + i));
    expect(numbers.at(-1)).toBe(11);
  });

  it('keeps logging to stderr when the file cannot be rotated, saying so once', () => {
    const lines: string[] = [];
    const file = join(dir, 'service.log');
    const logger = createLogger({ write: (text) => lines.push(text), file, maxFileBytes: 100, keepFiles: 1 });
    // Where the rotated file should go, a folder with something in it: the rotation fails.
    mkdirSync(join(`${file}.1`, 'in-the-way'), { recursive: true });
    for (let i = 0; i < 5; i++) logger.info(`salus: line ${i} ${'x'.repeat(40)}`);
    expect(lines.filter((l) => l.startsWith('salus: warning: stopped writing the log file'))).toHaveLength(1);
    expect(lines.at(-1)).toBe(`salus: line 4 ${'x'.repeat(40)}\n`);
  });
});
