/**
 * The preload: exposes `window.salus`, a `DesktopApi` (SalusApi plus the
 * desktop's extras), through `contextBridge`. Each method is one
 * `ipcRenderer.invoke` or a listener on one push channel; `ipcRenderer`
 * itself, and the IPC event objects that carry it, never reach the page.
 *
 * A sandboxed preload runs as a classic script that may `require` only
 * `electron` and a few Node built-ins, so this file is CommonJS (.cts) and
 * imports nothing of ours but types. The channel names and the panel's calls
 * are therefore restated here, and the compiler holds them equal to
 * desktopApi.ts's and core/protocol/calls.ts's: a call added to the table is a
 * type error here until its name is added to PANEL_CALLS.
 */
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import type { ConnectionState, ServiceEvent } from '../core/protocol/api.js';
import type { PanelCallName, PanelMethods } from '../core/protocol/calls.js';
import type { DesktopApi, InvokeMethod, PUSH_CHANNELS, PushPayloads, ServiceStatus } from './desktopApi.js';

/** The panel's calls (core/protocol/calls.ts), one invoke channel each. */
export const PANEL_CALLS = [
  'snapshot', 'setPolicy', 'setPolicyParams', 'killJob', 'pauseJob', 'resumeJob', 'setPriority', 'setShare',
  'launchJob', 'uploadJob', 'jobOutput', 'exampleJobs', 'clusterJobs', 'killClusterJob',
] as const satisfies readonly PanelCallName[];
/** Compiles only while PANEL_CALLS names every panel call. */
const everyPanelCall: [Exclude<PanelCallName, (typeof PANEL_CALLS)[number]>] extends [never] ? true : never = true;
void everyPanelCall;

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

  // Trailing undefined arguments are dropped: `setPolicy(name)` sends one argument, as main expects.
  const panelMethods = Object.fromEntries(PANEL_CALLS.map((method) => [method, (...args: unknown[]) => {
    let end = args.length;
    while (end > 0 && args[end - 1] === undefined) end -= 1;
    return invoke(method, ...args.slice(0, end));
  }])) as unknown as PanelMethods;

  // A notification click can come before the panel listens: keep the last one for it.
  let pendingSelection: string | null = null;
  let selectListeners = 0;
  listen('selectJob', (jobId) => { if (selectListeners === 0) pendingSelection = jobId; });

  return {
    ...panelMethods,
    subscribe: (listener: (event: ServiceEvent) => void) => listen('event', listener),
    onConnection: (listener: (state: ConnectionState) => void) => watch('connection', 'connectionState', listener),
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
