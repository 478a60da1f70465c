/**
 * Test doubles at the renderer's boundary: a fake `SalusApi` whose methods are
 * spies answering from a snapshot, with `emit` and `setConnection` to play the
 * service's side; and a render helper that wires store, commands and context.
 */
import { createElement, type ReactElement } from 'react';
import { render, type RenderResult } from '@testing-library/react';
import { vi, type Mock } from 'vitest';
import type { ConnectionState, SalusApi, ServiceEvent } from '../../../core/protocol/api.js';
import type { ServiceSnapshot } from '../../../core/protocol/state.js';
import type { ClusterJob } from '../../../core/protocol/cluster.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { createCommands } from '../../../renderer/src/store/commands.js';
import { PanelContext } from '../../../renderer/src/store/hooks.js';
import { createPanelStore, type PanelStore } from '../../../renderer/src/store/panelStore.js';

type Spied<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? Mock<(...args: A) => R> : T[K] };

export interface FakeApi extends Spied<SalusApi> {
  /** Delivers an event to every subscriber, as the service would push it. */
  emit(event: ServiceEvent): void;
  /** Reports a connection state to every `onConnection` listener. */
  setConnection(state: ConnectionState): void;
}

/** What the fake API's `clusterJobs` lists: a running job on node1, a pending one, and one that finished. */
export const FAKE_CLUSTER_JOBS: ClusterJob[] = [
  { slurmJobId: '101', name: 'slurm-a', user: 'ada', state: 'RUNNING', node: 'node1', partition: 'gpu', submittedAt: 1_699_999_000_000, startedAt: 1_699_999_880_000, finishedAt: null, exitCode: null, output: null },
  { slurmJobId: '102', name: 'slurm-b', user: 'ada', state: 'PENDING', node: null, partition: 'gpu', submittedAt: 1_699_999_900_000, startedAt: null, finishedAt: null, exitCode: null, output: null },
  { slurmJobId: '99', name: 'slurm-old', user: 'ada', state: 'COMPLETED', node: 'node2', partition: 'gpu', submittedAt: 1_699_999_000_000, startedAt: 1_699_999_000_000, finishedAt: 1_699_999_065_000, exitCode: 0, output: null },
];

/** A fake API answering from `snapshot` (the demo snapshot, fixed clock, by default). */
export function createFakeApi(snapshot: ServiceSnapshot = demoSnapshot(1_700_000_000_000)): FakeApi {
  const listeners = new Set<(event: ServiceEvent) => void>();
  const connectionListeners = new Set<(state: ConnectionState) => void>();
  return {
    emit: (event) => listeners.forEach((listener) => listener(event)),
    setConnection: (state) => connectionListeners.forEach((listener) => listener(state)),
    snapshot: vi.fn(async () => structuredClone(snapshot)),
    subscribe: vi.fn((listener: (event: ServiceEvent) => void) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    }),
    onConnection: vi.fn((listener: (state: ConnectionState) => void) => {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    }),
    setPolicy: vi.fn(async (name) => ({ ...snapshot.policy, name })),
    setPolicyParams: vi.fn(async (params) => ({ ...snapshot.policy, params: { ...snapshot.policy.params, ...params } })),
    killJob: vi.fn(async () => undefined),
    pauseJob: vi.fn(async () => undefined),
    resumeJob: vi.fn(async () => undefined),
    setPriority: vi.fn(async () => undefined),
    setShare: vi.fn(async () => undefined),
    launchJob: vi.fn(async () => ({ jobId: 'new-job' })),
    uploadJob: vi.fn(async (fileName: string) => ({ file: `/srv/salus/jobs/${fileName}` })),
    jobOutput: vi.fn(async (id: string) => `output of ${id}\n`),
    clusterJobs: vi.fn(async () => ({ available: true as const, jobs: structuredClone(FAKE_CLUSTER_JOBS) })),
    killClusterJob: vi.fn(async () => undefined),
    exampleJobs: vi.fn(async () => [
      { name: 'wgsl-train', file: '/opt/salus/assets/jobs/wgsl-train.js', description: 'a 2-layer MLP trained with WGSL compute shaders.' },
      { name: 'tfjs-train', file: '/opt/salus/assets/jobs/tfjs-train.js', description: 'TensorFlow.js on its WebGPU backend.' },
    ]),
  };
}

export interface Rendered extends RenderResult {
  store: PanelStore;
  api: FakeApi;
}

/**
 * Renders `element` inside the panel's context with a store already holding
 * `snapshot`, commands over `api`, and `reconnect` if given.
 */
export function renderPanel(
  element: ReactElement,
  options: { api?: FakeApi; snapshot?: ServiceSnapshot; store?: PanelStore; reconnect?: () => void } = {},
): Rendered {
  const snapshot = options.snapshot ?? demoSnapshot(1_700_000_000_000);
  const api = options.api ?? createFakeApi(snapshot);
  const store = options.store ?? createPanelStore();
  if (!options.store) {
    store.getState().applySnapshot(snapshot);
    store.getState().setConnection('open');
  }
  const commands = createCommands(api, store);
  const result = render(createElement(PanelContext.Provider, { value: { store, commands, reconnect: options.reconnect } }, element));
  return { ...result, store, api };
}

/**
 * happy-dom lays nothing out, so every element is 0 px tall and the job
 * queue's virtualizer would show no rows. Give scroll containers a height.
 */
export function giveElementsHeight(heightPx = 600): () => void {
  const descriptor = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight');
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => heightPx });
  return () => {
    if (descriptor) Object.defineProperty(HTMLElement.prototype, 'clientHeight', descriptor);
    else delete (HTMLElement.prototype as { clientHeight?: number }).clientHeight;
  };
}
