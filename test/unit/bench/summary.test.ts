/**
 * The evaluation summary (bench/summary.ts): experiments written by separate
 * runs add up in one file, a rerun replaces its own rows by id, and the table
 * says which targets are met.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addSummaryRows, formatSummary, readSummary, type SummaryRow } from '../../../bench/summary.js';

let dir = '';
let path = '';
const where = { machine: { cpuCount: 2 }, gpu: 'SwiftShader (vulkan, software)' };
const row = (id: string, ratio: number, target?: number): SummaryRow => ({
  id, what: `${id} thing`, ours: 10, baseline: 10 * ratio, unit: 'ms', ratio, paper: '3.19×', ...(target === undefined ? {} : { target }),
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'salus-summary-'));
  path = join(dir, 'results', 'summary.json');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('addSummaryRows', () => {
  it('keeps other experiments\' rows and replaces a rerun\'s own, in first-seen order', () => {
    addSummaryRows(path, [row('E4', 600), row('E5.tfjs-mlp', 0.95)], where);
    addSummaryRows(path, [row('S1', 3.1)], { ...where, gpu: 'other' });
    const summary = addSummaryRows(path, [row('E5.tfjs-mlp', 0.97), row('E5.tfjs-cnn', 0.91)], where);

    expect(summary.rows.map((r) => [r.id, r.ratio])).toEqual([['E4', 600], ['E5.tfjs-mlp', 0.97], ['S1', 3.1], ['E5.tfjs-cnn', 0.91]]);
    const onDisk = JSON.parse(readFileSync(path, 'utf8'));
    expect(onDisk).toEqual(summary);
    expect(Object.keys(onDisk)).toEqual(['machine', 'gpu', 'updatedAt', 'rows']);
    expect(onDisk.gpu).toBe(where.gpu);
  });

  it('starts over from a file that does not parse', () => {
    addSummaryRows(path, [row('E4', 600)], where);
    writeFileSync(path, '{"rows": [tor');
    expect(readSummary(path).rows).toEqual([]);
    expect(addSummaryRows(path, [row('E2', 2.1)], where).rows.map((r) => r.id)).toEqual(['E2']);
  });
});

describe('formatSummary', () => {
  it('prints every row with its figures and whether its target is met', () => {
    const table = formatSummary([row('E4', 612, 500), row('E5.ort-mlp', 0.84, 0.9), row('S1', 3.2)]).split('\n');
    expect(table[0]).toMatch(/^id\s+what\s+ours\s+baseline\s+ratio\s+target\s+paper$/);
    expect(table[2]).toMatch(/^E4\s.*612×\s+≥ 500 met/);
    expect(table[3]).toMatch(/E5\.ort-mlp\s.*0\.84×\s+≥ 0\.9 MISSED/);
    expect(table[4]).toMatch(/^S1\s.*3\.20×\s+3\.19×$/);
  });
});
