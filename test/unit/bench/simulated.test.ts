/**
 * S1 (bench/evaluation/simulated.ts, `npm run bench -- --only s1`): the
 * paper-shaped trace through the simulator, FIFO against SRTF. Virtual time, so
 * the figures are exact and the same on every machine (docs/simulator.md).
 */
import { describe, expect, it } from 'vitest';
import { benchSimulated } from '../../../bench/evaluation/simulated.js';

describe('S1', () => {
  it('gives SRTF 3.27× FIFO\'s average JCT with memory unlimited (paper 3.19×, within 15%), 2.63× at 16 GiB', async () => {
    const result = await benchSimulated();
    const [unlimited, p100] = result.summaryRows!;
    expect(unlimited).toMatchObject({ id: 'S1', unit: 'min', ours: 20.9, baseline: 68.5, ratio: 3.27, paper: '3.19×', target: 2.71 });
    expect(Math.abs(unlimited.ratio / 3.19 - 1)).toBeLessThan(0.15);
    expect(p100).toMatchObject({ id: 'S1.16GiB', ours: 25.3, baseline: 66.5, ratio: 2.63 });
    expect(p100.target).toBeUndefined();
    expect(result.rows.map((row) => row.met)).toEqual([true, null]);
    // One lane, never idle while a job waits: both policies end when the last job's work is done.
    for (const run of (result.data as { runs: { fifo: { makespanMs: number; peakLanes: number }; srtf: { makespanMs: number } }[] }).runs) {
      expect(run.fifo.makespanMs).toBe(run.srtf.makespanMs);
      expect(run.fifo.peakLanes).toBe(1);
    }
  }, 120_000);
});
