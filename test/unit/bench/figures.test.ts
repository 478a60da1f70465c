import { describe, expect, it } from 'vitest';
import { cdfChart, cdfPoints, figureWidth, lineChart, niceTicks } from '../../../bench/figures.js';
import { memoryOverRun, memoryRatio } from '../../../bench/evaluation/memory.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import type { Sample } from '../../../bench/sampler.js';

describe('niceTicks', () => {
  it('covers the range with round steps', () => {
    expect(niceTicks(0, 37)).toEqual([0, 10, 20, 30, 40]);
    expect(niceTicks(0, 1)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    const ticks = niceTicks(3, 1234);
    expect(ticks[0]).toBeLessThanOrEqual(3);
    expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(1234);
  });

  it('gives one tick for an empty range', () => {
    expect(niceTicks(5, 5)).toEqual([5]);
  });
});

describe('cdfPoints', () => {
  it('steps up by 1/n at each sorted value and ends at 1', () => {
    expect(cdfPoints([3, 1])).toEqual([[1, 0], [1, 0.5], [3, 0.5], [3, 1]]);
  });
});

describe('charts', () => {
  it('widen for a long legend label instead of clipping it', () => {
    const label = 'Σ(P_j+E_j) over the run, MPS-style (each job its own peak)';
    const svg = lineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ label, points: [[0, 1], [1, 2]] }] });
    const width = Number(svg.match(/<svg[^>]* width="(\d+)"/)![1]);
    const textX = Number(svg.match(new RegExp(`<text x="([\\d.]+)"[^>]*>${label.replace(/[()+]/g, '\\$&')}<`))![1]);
    // The label's extent at the legend's generous 7 px a character stays inside the figure.
    expect(textX + label.length * 7).toBeLessThanOrEqual(width);
    expect(figureWidth(['FIFO'])).toBe(640); // short labels keep the usual width
  });

  it('draw one polyline and one legend entry per series, text escaped', () => {
    const svg = cdfChart({
      title: 'JCT <per> policy & more', xLabel: 's', yLabel: 'fraction',
      series: [{ label: 'FIFO', values: [1, 2, 3] }, { label: 'SRTF', values: [0.5, 1] }],
      marker: { x: 2, label: 'SLO' },
    });
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.match(/<polyline/g)).toHaveLength(2);
    expect(svg).toContain('JCT &lt;per&gt; policy &amp; more');
    expect(svg).toContain('>SRTF<');
    expect(svg).toContain('>SLO<');
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  });

  it('place points inside the plot area', () => {
    const svg = lineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ label: 'a', points: [[0, 0], [10, 5]] }] });
    const coords = svg.match(/points="([^"]+)"/)![1].split(' ').map((pair) => pair.split(',').map(Number));
    for (const [x, y] of coords) {
      expect(x).toBeGreaterThanOrEqual(64);
      expect(x).toBeLessThanOrEqual(640 - 150);
      expect(y).toBeGreaterThanOrEqual(36);
      expect(y).toBeLessThanOrEqual(360 - 48);
    }
  });
});

describe('memoryRatio (E6)', () => {
  const sample = (at: number, persistentBytes: number, laneBytes: number, mpsBytes: number): Sample => ({
    at, busyShare: 0, running: 1, queued: 0, lanes: 1, usedBytes: persistentBytes + laneBytes, persistentBytes, laneBytes, mpsBytes,
  });

  it('is Σ(P+E) / (ΣP + Σ lanes) at the sample where MPS-style sharing needs the most', () => {
    const ratio = memoryRatio([sample(1, 1024, 1024, 3072), sample(2, 4096, 2048, 12288), sample(3, 0, 0, 0)]);
    expect(ratio).toMatchObject({ mpsKiB: 12, oursKiB: 6, ratio: 2, at: 2 });
  });

  it('is null when no sample held memory', () => {
    expect(memoryRatio([sample(1, 0, 0, 0)])).toBeNull();
  });
});

describe('memoryOverRun (E6 over a run)', () => {
  const sample = (at: number, persistentBytes: number, laneBytes: number, jobs: { name: string; persistentBytes: number }[] = []): Sample => ({
    at, busyShare: 0, running: 1, queued: 0, lanes: 1, usedBytes: persistentBytes + laneBytes, persistentBytes, laneBytes, mpsBytes: 0,
    jobs: jobs.map((j) => ({ ...j, ephemeralPeakBytes: 0 })),
  });
  const info = (name: string, stateBytes: number, ephemeralPeakBytes: number) => ({ name, memory: { persistentBytes: 0, ephemeralPeakBytes, stateBytes } }) as unknown as JobInfo;

  it('is Σ(stateBytes + ephemeral peak) over the most ΣP + Σ lanes held: one lane shared by three jobs', () => {
    // Three jobs of P 1 KiB and E 3 KiB on one lane of 3 KiB: MPS-style 12 KiB, held at most 6 KiB.
    const infos = [info('a', 1024, 3072), info('b', 1024, 3072), info('c', 1024, 3072)];
    const result = memoryOverRun(infos, [sample(1, 1024, 3072), sample(2, 3072, 3072), sample(3, 2048, 3072)]);
    expect(result).toMatchObject({ mpsKiB: 12, oursKiB: 6, ratio: 2, sumPKiB: 3, sumEKiB: 9, maxEKiB: 3, at: 2 });
    expect(result!.jobs.every((j) => j.persistentFrom === 'stateBytes')).toBe(true);
  });

  it('takes a job\'s largest sampled persistent bytes where they exceed its measured state (or it measured none)', () => {
    const result = memoryOverRun([info('a', 0, 1024)], [sample(1, 2048, 1024, [{ name: 'a', persistentBytes: 2048 }]), sample(2, 1024, 1024, [{ name: 'a', persistentBytes: 1024 }])]);
    expect(result!.jobs[0]).toEqual({ name: 'a', persistentBytes: 2048, ephemeralBytes: 1024, persistentFrom: 'sampled' });
    expect(result).toMatchObject({ mpsKiB: 3, oursKiB: 3, ratio: 1 });
  });

  it('is null when nothing was held', () => {
    expect(memoryOverRun([info('a', 1024, 1024)], [sample(1, 0, 0)])).toBeNull();
  });

  it('keeps the measured state where the samples saw less', () => {
    const result = memoryOverRun([info('a', 4096, 0)], [sample(1, 2048, 0, [{ name: 'a', persistentBytes: 2048 }])]);
    expect(result!.jobs[0]).toMatchObject({ persistentBytes: 4096, persistentFrom: 'stateBytes' });
  });
});
