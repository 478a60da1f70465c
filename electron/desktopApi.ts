/**
 * The contract between the main process and the preload: the IPC channel
 * names and what `window.salus` offers beyond `SalusApi`. The preload may only
 * `import type` from here (a sandboxed preload cannot load our modules), so it
 * restates the channel names and the compiler checks they equal these.
 */
import type { ConnectionState, SalusApi } from '../core/protocol/api.js';
import type { BridgeMethod } from '../core/protocol/bridge.js';

/** Where the supervised service stands, as the panel and notifications hear it. */
export interface ServiceStatus {
  /** `starting`: spawned, not yet listening; `restarting`: died, a restart is scheduled. */
  state: 'starting' | 'running' | 'restarting' | 'stopped';
  pid: number | null;
  socketPath: string;
  /** Restarts since the app started. */
  restarts: number;
  /** Failures in a row without a stable run in between (drives the backoff). */
  consecutiveFailures: number;
  /** With `restarting`: when the next start is due, in ms from now. */
  restartInMs: number | null;
  /** One line for a person: what happened, and the service's last words when it died. */
  message: string;
}

/** What the Electron preload exposes as `window.salus`: SalusApi plus desktop-only extras. */
export interface DesktopApi extends SalusApi {
  /**
   * The path of a file dropped on the window, checked by the main process (it
   * exists, is a file, and ends in .js or .mjs); rejects otherwise. The
   * argument is the DOM `File` from the drop event.
   */
  pathForDroppedFile(file: unknown): Promise<string>;
  /** Calls `listener` with the service's status now and on every change. */
  onServiceStatus(listener: (status: ServiceStatus) => void): () => void;
  /** Calls `listener` when the user clicks a job's notification: select that job. */
  onSelectJob(listener: (jobId: string) => void): () => void;
}

/** Invoke methods beyond SalusApi's, answered by the main process itself. */
export type DesktopMethod = 'checkJobFile' | 'connectionState' | 'serviceStatus';

/** Every method the renderer may invoke, one `ipcMain.handle` channel each. */
export type InvokeMethod = BridgeMethod | DesktopMethod;

/** The prefix of every channel; `salus:<method>` for invokes. */
export const CHANNEL_PREFIX = 'salus:';

/** The channel of an invoke method. */
export function invokeChannel<M extends InvokeMethod>(method: M): `salus:${M}` {
  return `${CHANNEL_PREFIX}${method}` as `salus:${M}`;
}

/** Main → renderer pushes (webContents.send). */
export const PUSH_CHANNELS = {
  event: 'salus:event',
  connection: 'salus:connection',
  serviceStatus: 'salus:service-status',
  selectJob: 'salus:select-job',
} as const;

/** Payload of each push channel. */
export interface PushPayloads {
  event: Parameters<Parameters<SalusApi['subscribe']>[0]>[0];
  connection: ConnectionState;
  serviceStatus: ServiceStatus;
  selectJob: string;
}
