import { describe, expect, it } from 'vitest';
import { MetricsHistory } from '../../../renderer/src/store/metricsHistory.js';

const sample = (second: number, rates: Record<string, number> = {}) => ({
  at: second * 1000, busyShare: second / 100, queueLength: second, iterationsPerSecond: rates,
});

describe('MetricsHistory', () => {
  it('returns samples oldest first, before and after wrapping', () => {
    const history = new MetricsHistory(4);
    for (let s = 1; s <= 3; s += 1) history.push(sample(s));
    expect(history.columns()).toEqual({ timeSeconds: [1, 2, 3], busyShare: [0.01, 0.02, 0.03], queueLength: [1, 2, 3] });
    for (let s = 4; s <= 10; s += 1) history.push(sample(s));
    expect(history.length).toBe(4);
    expect(history.columns().timeSeconds).toEqual([7, 8, 9, 10]);
    expect(history.columns().queueLength).toEqual([7, 8, 9, 10]);
    expect(history.latest()).toEqual({ at: 10_000, busyShare: 0.1, queueLength: 10 });
  });

  it('gives each job a series aligned with time, with gaps where it ran nothing', () => {
    const history = new MetricsHistory(5);
    history.push(sample(1, { a: 1 }));
    history.push(sample(2, { a: 2, b: 10 }));
    history.push(sample(3, { b: 11 }));
    expect(history.jobIds()).toEqual(['a', 'b']);
    expect(history.jobSeries('a')).toEqual([1, 2, null]);
    expect(history.jobSeries('b')).toEqual([null, 10, 11]);
    expect(history.jobSeries('unknown')).toEqual([null, null, null]);
  });

  it('averages a job\'s whole-iteration counts over a few samples, so a slow job reads its rate', () => {
    const history = new MetricsHistory(10);
    [0, 1, 1, 0, 1, 1].forEach((rate, s) => history.push(sample(s, { slow: rate })));
    history.push(sample(6));
    history.push(sample(7, { slow: 1 }));
    expect(history.jobSeries('slow', 3)).toEqual([0, 0.5, 2 / 3, 2 / 3, 2 / 3, 2 / 3, null, 1]);
    expect(history.jobSeries('slow')).toEqual([0, 1, 1, 0, 1, 1, null, 1]);
  });

  it('forgets a job once its last sample scrolls out of the window', () => {
    const history = new MetricsHistory(3);
    history.push(sample(1, { gone: 4 }));
    history.push(sample(2, { stays: 1 }));
    history.push(sample(3, { stays: 1 }));
    expect(history.jobIds()).toContain('gone');
    history.push(sample(4, { stays: 1 }));
    expect(history.jobIds()).toEqual(['stays']);
    expect(history.jobSeries('stays')).toEqual([1, 1, 1]);
  });

  it('clears, and refuses a useless capacity', () => {
    const history = new MetricsHistory(2);
    history.push(sample(1, { a: 1 }));
    history.clear();
    expect(history.length).toBe(0);
    expect(history.latest()).toBeNull();
    expect(history.jobIds()).toEqual([]);
    expect(() => new MetricsHistory(1)).toThrow(RangeError);
  });
});
