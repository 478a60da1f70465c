/**
 * `npm run bench -- --only wire` (bench/wire.ts, issue 19) at its smallest: every
 * row it reports, W1–W5, is there and well formed (both sides and the ratio
 * finite and positive, targets where the issue sets them), and it leaves no
 * process of its own behind. No timing is asserted: the figures are the bench's
 * to report, not the test's to judge. Runs the compiled `salus` (npm run build first).
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { JOBS_DIR } from '../../bench/harness.js';
import { benchWire, WIRE_QUICK, type WireOptions } from '../../bench/wire.js';

/** The quick mode, smaller still: one round, a few batches, a 4 MiB upload, 1 and 2 jobs at once. */
const SMALLEST: WireOptions = {
  ...WIRE_QUICK,
  rounds: 1, pings: 60, coldPings: 30, dispatches: 50, submits: 3, cheapBatches: 5, warmupBatches: 2,
  uploadMib: 4, uploadRounds: 1, uploadRepeats: 2, uploadReadbacks: 1, ceilingJobs: [1, 2], ceilingSeconds: 2,
};

const positive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0;

describe('bench wire', () => {
  it('reports W1-W5 with both sides and their ratio', async () => {
    const result = await benchWire(SMALLEST);

    const rows = result.summaryRows ?? [];
    expect(rows.map((row) => row.id)).toEqual(['W1', 'W2', 'W3', 'W3.cold', 'W4', 'W4.first', 'W4.read', 'W5.1', 'W5.2']);
    for (const row of rows) {
      expect([row.id, row.ours, row.baseline, row.ratio].every((v, i) => i === 0 || positive(v)), JSON.stringify(row)).toBe(true);
      expect(row.what.length).toBeGreaterThan(20);
      expect(row.unit).not.toBe('');
      expect(row.paper).toMatch(/^issue 19: /);
    }
    // The targets on W1-W4; the ceiling and the cold calls are measured, not judged.
    const measuredOnly = (id: string) => id.startsWith('W5') || id === 'W3.cold';
    for (const row of rows) expect(row.target === undefined ? 'none' : positive(row.target), row.id).toBe(measuredOnly(row.id) ? 'none' : true);

    expect(result.rows).toHaveLength(rows.length);
    for (const row of result.rows) {
      expect(row.salus).not.toBe('');
      expect(row.reference).not.toBe('');
      expect(row.ratio).toMatch(/\d/);
    }
    expect(result.data.ceiling).toHaveLength(2);

    // Nothing of this bench still runs: its job scripts are on no process's command line.
    const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).split('\n')
      .filter((line) => line.includes(JOBS_DIR));
    expect(left).toEqual([]);
  }, 240_000);
});
