/**
 * `SalusApi`: everything the panel may ask of the service, in one typed place
 * (DESIGN.md decision 7), its requests derived from the call table (calls.ts). The Electron preload implements it over
 * `ipcRenderer.invoke`; the headless panel implements it over the WebSocket at
 * `/api/events`. The renderer knows this interface and nothing else of the host.
 */
import type { PanelMethods } from './calls.js';
import type { JobInfo, MemoryMap, PolicyInfo, ServiceSnapshot } from './state.js';

export type { ExampleJob, LaunchRequest } from './calls.js';

/** A change pushed by the service. `snapshot` replaces everything; the others replace one part. */
export type ServiceEvent =
  | { type: 'snapshot'; snapshot: ServiceSnapshot }
  | { type: 'jobs'; jobs: JobInfo[] }
  | { type: 'memory'; memory: MemoryMap }
  | { type: 'policy'; policy: PolicyInfo }
  | { type: 'metrics'; at: number; busyShare: number; queueLength: number; iterationsPerSecond: Record<string, number>; /** Each GPU's busy share, by id (with several GPUs). */ busyShareByGpu?: Record<string, number> }
  | { type: 'output'; jobId: string; stream: 'stdout' | 'stderr'; text: string };

/** Where the panel's connection to the service stands. */
export type ConnectionState = 'connecting' | 'open' | 'closed';

/**
 * The panel's API: one method per panel call of core/protocol/calls.ts, plus the
 * event stream and the connection's state.
 */
export interface SalusApi extends PanelMethods {
  /** Calls `listener` for every event until the returned function is called. */
  subscribe(listener: (event: ServiceEvent) => void): () => void;
  /** Calls `listener` when the connection changes state; returns an unsubscribe function. */
  onConnection(listener: (state: ConnectionState) => void): () => void;
  /**
   * Desktop host only: the checked path of a file dropped on the window (a DOM
   * `File`), so the job runs in place, next to the files it imports. Hosts without
   * it (a browser) upload the file's text with `uploadJob` instead.
   */
  pathForDroppedFile?(file: unknown): Promise<string>;
}
