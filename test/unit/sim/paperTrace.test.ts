/**
 * The 100-job trace shaped like the Salus paper's, S1's input: the file in
 * assets/traces is what bench/evaluation/paperTrace.ts makes, with the paper's
 * models, hints and run lengths; docs/simulator.md says where its numbers come
 * from. (S1 itself, FIFO / SRTF through the simulator: test/unit/bench/simulated.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PAPER_MODELS, paperTraceCsv, RUN_MINUTES } from '../../../bench/evaluation/paperTrace.js';
import { parseTrace } from '../../../core/sim/trace.js';

const ASSET = join(import.meta.dirname, '../../../assets/traces/paper-100.csv');
const text = readFileSync(ASSET, 'utf8');
const trace = parseTrace(text, 'paper-100.csv');

describe('the paper-shaped trace', () => {
  it('is what bench/evaluation/paperTrace.ts makes, with the paper\'s models, hints and run lengths', () => {
    expect(text).toBe(paperTraceCsv());
    expect(trace).toHaveLength(100);
    for (const job of trace) {
      const model = PAPER_MODELS.find((m) => job.name.includes(`-${m.name}-`))!;
      expect(model, job.name).toBeDefined();
      expect(job).toMatchObject({ iterationMs: model.iterationMs, persistentBytes: Math.round(model.persistentBytes), ephemeralBytes: Math.round(model.ephemeralBytes) });
      const minutes = (job.iterations * job.iterationMs) / 60_000;
      expect(RUN_MINUTES.some((m) => Math.abs(m - minutes) * 60_000 <= job.iterationMs), `${job.name}: ${minutes} min`).toBe(true);
    }
    // The paper's makespan (about 300 minutes for 100 jobs, the GPU busy throughout) puts the mean run near 3 minutes.
    const meanMinutes = trace.reduce((sum, job) => sum + job.iterations * job.iterationMs, 0) / trace.length / 60_000;
    expect(meanMinutes).toBeGreaterThan(2.5);
    expect(meanMinutes).toBeLessThan(3.5);
  });
});
