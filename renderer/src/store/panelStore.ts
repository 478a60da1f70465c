/**
 * The panel's one bound store, built from slices (zustand's vanilla API: no
 * React here). `applyEvent` is the single entry point for what the service
 * pushes; everything else is panel-side state and its actions.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ServiceEvent } from '../../../core/protocol/api.js';
import type { ServiceSnapshot } from '../../../core/protocol/state.js';
import { createConnectionSlice, type ConnectionSlice } from './connectionSlice.js';
import { createJobsSlice, type JobsSlice } from './jobsSlice.js';
import { createMetricsSlice, type MetricsSlice } from './metricsSlice.js';
import { createServiceSlice, withPendingParams, type ServiceSlice } from './serviceSlice.js';
import { createUiSlice, type UiSlice } from './uiSlice.js';

/** Everything the panel knows, and the actions that change it. */
export type PanelState = JobsSlice & ServiceSlice & ConnectionSlice & MetricsSlice & UiSlice & {
  /** Applies one event from the service. */
  applyEvent(event: ServiceEvent): void;
  /** Replaces all service state with `snapshot` (the metrics history is kept). */
  applySnapshot(snapshot: ServiceSnapshot): void;
};

/** The vanilla store: `getState`, `setState`, `subscribe`. */
export type PanelStore = StoreApi<PanelState>;

/** Sizes fixed when the store is made. */
export interface PanelStoreOptions {
  /** Metrics samples kept for the charts; default 600. */
  metricsCapacity?: number;
}

/** Creates an empty store: no jobs, no memory map, `connecting`. */
export function createPanelStore(options: PanelStoreOptions = {}): PanelStore {
  return createStore<PanelState>()((...args) => {
    const [set, get] = args;
    return {
      ...createJobsSlice(...args),
      ...createServiceSlice(...args),
      ...createConnectionSlice(...args),
      ...createMetricsSlice(options.metricsCapacity)(...args),
      ...createUiSlice(...args),
      applySnapshot(snapshot) {
        get().applyJobs(snapshot.jobs);
        set({
          version: snapshot.version,
          gpu: snapshot.gpu,
          memory: snapshot.memory,
          policy: withPendingParams(snapshot.policy, get().pendingParams),
          busyShare: snapshot.busyShare,
          busyShareByGpu: snapshot.busyShareByGpu ?? {},
          snapshotAt: snapshot.at,
        });
      },
      applyEvent(event) {
        const state = get();
        switch (event.type) {
          case 'snapshot':
            state.applySnapshot(event.snapshot);
            break;
          case 'jobs':
            state.applyJobs(event.jobs);
            break;
          case 'memory':
            state.applyMemory(event.memory);
            break;
          case 'policy':
            state.applyPolicy(event.policy);
            break;
          case 'metrics':
            state.pushMetrics(event);
            break;
          case 'output':
            state.appendOutput(event.jobId, event.text);
            break;
        }
      },
    };
  });
}
