/**
 * What each activity chart plots, as plain functions of the store's state:
 * its series (rebuilt only when the set of series changes), its data columns
 * from the metrics ring buffer, and the number its caption shows.
 */
import type uPlot from 'uplot';
import { jobColor } from '../colors.js';
import { formatPercent } from '../format.js';
import type { PanelState } from '../store/panelStore.js';

/** Colours read from the theme's CSS variables (canvas cannot use `var()`). */
export interface ChartTheme {
  text: string;
  grid: string;
  accent: string;
  accentFill: string;
  queue: string;
}

/** One chart's series, data and captions, as functions of the store's state. */
export interface ChartSpec {
  /** Identity of the series set; the chart is rebuilt when it changes. */
  seriesKey(state: PanelState): string;
  /** The y series (x is time), in data order. */
  series(state: PanelState, theme: ChartTheme): uPlot.Series[];
  data(state: PanelState): uPlot.AlignedData;
  /** Fixed y range, or null to fit the data (from 0, or on a log scale). */
  yRange: [number, number] | null;
  /** A log scale keeps a 4 ms job and a 400 ms job readable on one chart. */
  yLog?: boolean;
  /** Allowed y tick steps (e.g. whole numbers for counts); uPlot's defaults otherwise. */
  yIncrs?: number[];
  formatY(value: number): string;
  /**
   * The caption's text: the sample at `index`, or the latest when null; for
   * `series` (1-based, as uPlot counts) that series alone, when one is focused.
   */
  readout(state: PanelState, index: number | null, series: number | null): string;
}

/** Throughput lines shown at most; the first jobs seen in the window win. */
export const MAX_THROUGHPUT_SERIES = 12;

/** Samples (seconds) each throughput point averages over; see `MetricsHistory.jobSeries`. */
export const THROUGHPUT_AVERAGE_SAMPLES = 10;

function throughputSeries(state: PanelState, jobId: string): Array<number | null> {
  return state.metrics.jobSeries(jobId, THROUGHPUT_AVERAGE_SAMPLES);
}

function at(values: ArrayLike<number | null | undefined>, index: number | null): number | null {
  const i = index ?? values.length - 1;
  const value = values[i];
  return value === undefined || value === null ? null : value;
}

/** GPU busy share over time, as a filled area from 0 to 100%. */
export const busySpec: ChartSpec = {
  seriesKey: () => 'busy',
  series: (_state, theme) => [{ label: 'Busy', stroke: theme.accent, fill: theme.accentFill, width: 1.5, points: { show: false } }],
  data: (state) => {
    const columns = state.metrics.columns();
    return [columns.timeSeconds, columns.busyShare];
  },
  yRange: [0, 1],
  formatY: (value) => formatPercent(value),
  readout: (state, index) => {
    const value = at(state.metrics.columns().busyShare, index);
    return value === null ? '—' : formatPercent(value);
  },
};

/** Jobs waiting, as a stepped line. */
export const queueSpec: ChartSpec = {
  seriesKey: () => 'queue',
  series: (_state, theme) => [{ label: 'Waiting', stroke: theme.queue, width: 1.5, points: { show: false } }],
  data: (state) => {
    const columns = state.metrics.columns();
    return [columns.timeSeconds, columns.queueLength];
  },
  yRange: null,
  yIncrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  formatY: (value) => String(value),
  readout: (state, index) => {
    const value = at(state.metrics.columns().queueLength, index);
    return value === null ? '—' : `${value} waiting`;
  },
};

function throughputJobs(state: PanelState): string[] {
  return state.metrics.jobIds().slice(0, MAX_THROUGHPUT_SERIES);
}

/** Iterations per second per job (averaged over a few seconds), one line each in the job's colour. */
export const throughputSpec: ChartSpec = {
  seriesKey: (state) => throughputJobs(state).join(','),
  series: (state) => throughputJobs(state).map((id) => ({
    label: state.jobsById[id]?.name ?? id,
    stroke: jobColor(id),
    width: 1.5,
    points: { show: false },
    spanGaps: false,
  })),
  data: (state) => [state.metrics.columns().timeSeconds, ...throughputJobs(state).map((id) => throughputSeries(state, id))],
  yRange: null,
  yLog: true,
  // A log axis splits at 1…9 × 10ⁿ; only the powers of ten get a label.
  formatY: (value) => (Number.isInteger(Math.log10(value)) ? String(value) : ''),
  readout: (state, index, series) => {
    const ids = throughputJobs(state);
    const focused = series !== null ? ids[series - 1] : undefined;
    if (focused) {
      const value = at(throughputSeries(state, focused), index);
      return `${state.jobsById[focused]?.name ?? focused} ${value === null ? '—' : value.toFixed(1)} it/s`;
    }
    const total = ids.reduce((sum, id) => sum + (at(throughputSeries(state, id), index) ?? 0), 0);
    return `${total.toFixed(1)} it/s total`;
  },
};
