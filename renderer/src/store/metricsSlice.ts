/**
 * The metrics history for the charts. `metrics` is one mutable ring buffer for
 * the store's lifetime; `metricsVersion` counts pushes so subscribers can tell
 * that it moved without React ever rendering its contents.
 */
import type { StateCreator } from 'zustand';
import { MetricsHistory, type MetricsSample } from './metricsHistory.js';
import type { PanelState } from './panelStore.js';

/** The ring buffer, its version counter, and the push action. */
export interface MetricsSlice {
  metrics: MetricsHistory;
  metricsVersion: number;
  pushMetrics(sample: MetricsSample): void;
}

/** A metrics slice keeping `capacity` samples (600: one minute at ten a second). */
export function createMetricsSlice(capacity = 600): StateCreator<PanelState, [], [], MetricsSlice> {
  return (set, get) => ({
    metrics: new MetricsHistory(capacity),
    metricsVersion: 0,
    pushMetrics(sample) {
      get().metrics.push(sample);
      set({ metricsVersion: get().metricsVersion + 1, busyShare: sample.busyShare, busyShareByGpu: sample.busyShareByGpu ?? {} });
    },
  });
}
