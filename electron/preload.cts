/**
 * The preload: exposes `window.salus`, a `DesktopApi` (SalusApi plus the
 * desktop's extras), through `contextBridge`. Each method is one
 * `ipcRenderer.invoke` or a listener on one push channel; `ipcRenderer`
 * itself, and the IPC event objects that carry it, never reach the page.
 *
 * A sandboxed preload runs as a classic script that may `require` only
 * `electron` and a few Node built-ins, so this file is CommonJS (.cts) and
 * imports nothing of ours but types; the channel names are restated here and
 * the compiler holds them equal to desktopApi.ts's.
 */
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import type { ConnectionState, ExampleJob, LaunchRequest, ServiceEvent } from '../core/protocol/api.js';
import type { PolicyInfo, PolicyName, PolicyParamValue, ServiceSnapshot } from '../core/protocol/state.js';
import type { ClusterJobs } from '../core/protocol/cluster.js';
import type { DesktopApi, InvokeMethod, PUSH_CHANNELS, PushPayloads, ServiceStatus } from './desktopApi.js';

const pushChannels: typeof PUSH_CHANNELS = {
  event: 'salus:event',
  connection: 'salus:connection',
  serviceStatus: 'salus:service-status',
  selectJob: 'salus:select-job',
};

/** The parts of Electron's renderer-side API the preload uses. */
export interface PreloadElectron {
  contextBridge: { exposeInMainWorld(key: string, api: unknown): void };
  ipcRenderer: {
    invoke(channel: string, ...args: unknown[]): Promise<unknown>;
    on(channel: string, listener: (event: unknown, payload: any) => void): unknown;
    removeListener(channel: string, listener: (event: unknown, payload: any) => void): unknown;
  };
  webUtils: { getPathForFile(file: never): string };
}

/** Builds the API over `ipcRenderer`; nothing of `ipcRenderer` escapes into the returned object. */
export function createDesktopApi({ ipcRenderer: ipc, webUtils: files }: Omit<PreloadElectron, 'contextBridge'>): DesktopApi {
  const invoke = <T,>(method: InvokeMethod, ...args: unknown[]): Promise<T> => ipc.invoke(`salus:${method}`, ...args) as Promise<T>;

  const listen = <K extends keyof PushPayloads>(name: K, listener: (payload: PushPayloads[K]) => void): (() => void) => {
    // Only the payload goes to the page: the event object would hand it `sender`, i.e. ipcRenderer.
    const relay = (_event: unknown, payload: PushPayloads[K]) => listener(payload);
    ipc.on(pushChannels[name], relay);
    return () => { ipc.removeListener(pushChannels[name], relay); };
  };

  /** Current value first (asked of main), then every push; a push that beats the answer wins. */
  const watch = <K extends 'connection' | 'serviceStatus'>(name: K, method: InvokeMethod, listener: (payload: PushPayloads[K]) => void) => {
    let pushed = false;
    let stopped = false;
    const stop = listen(name, (payload) => { pushed = true; listener(payload); });
    invoke<PushPayloads[K]>(method).then((now) => { if (!pushed && !stopped) listener(now); }, () => undefined);
    return () => { stopped = true; stop(); };
  };

  // A notification click can come before the panel listens: keep the last one for it.
  let pendingSelection: string | null = null;
  let selectListeners = 0;
  listen('selectJob', (jobId) => { if (selectListeners === 0) pendingSelection = jobId; });

  return {
    snapshot: () => invoke<ServiceSnapshot>('snapshot'),
    subscribe: (listener: (event: ServiceEvent) => void) => listen('event', listener),
    onConnection: (listener: (state: ConnectionState) => void) => watch('connection', 'connectionState', listener),
    setPolicy: (name: PolicyName, params?: Record<string, PolicyParamValue>) =>
      (params === undefined ? invoke<PolicyInfo>('setPolicy', name) : invoke<PolicyInfo>('setPolicy', name, params)),
    setPolicyParams: (params: Record<string, PolicyParamValue>) => invoke<PolicyInfo>('setPolicyParams', params),
    killJob: (id: string) => invoke<void>('killJob', id),
    pauseJob: (id: string) => invoke<void>('pauseJob', id),
    resumeJob: (id: string) => invoke<void>('resumeJob', id),
    setPriority: (id: string, priority: number) => invoke<void>('setPriority', id, priority),
    launchJob: (request: LaunchRequest) => invoke<{ jobId: string }>('launchJob', request),
    uploadJob: (fileName: string, source: string) => invoke<{ file: string }>('uploadJob', fileName, source),
    jobOutput: (id: string) => invoke<string>('jobOutput', id),
    exampleJobs: () => invoke<ExampleJob[]>('exampleJobs'),
    clusterJobs: () => invoke<ClusterJobs>('clusterJobs'),
    killClusterJob: (id: string) => invoke<void>('killClusterJob', id),
    pathForDroppedFile: async (file: unknown) => {
      const path = files.getPathForFile(file as never);
      if (!path) throw new Error('salus: the dropped item is not a file on this computer');
      return invoke<string>('checkJobFile', path);
    },
    onServiceStatus: (listener: (status: ServiceStatus) => void) => watch('serviceStatus', 'serviceStatus', listener),
    onSelectJob: (listener: (jobId: string) => void) => {
      selectListeners += 1;
      const stop = listen('selectJob', listener);
      if (pendingSelection !== null) {
        const jobId = pendingSelection;
        pendingSelection = null;
        listener(jobId);
      }
      return () => { selectListeners -= 1; stop(); };
    },
  };
}

/** Exposes the API as `window.salus` in the page's world. */
export function exposeDesktopApi(electron: PreloadElectron): void {
  electron.contextBridge.exposeInMainWorld('salus', createDesktopApi(electron));
}

exposeDesktopApi({ contextBridge, ipcRenderer, webUtils });
