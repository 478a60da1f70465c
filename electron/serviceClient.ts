/**
 * The main process's control connection to the supervised service: the
 * `SalusApi` calls forwarded as control calls, and the service's events
 * relayed to the renderer. It (re)connects whenever the supervisor reports the
 * service listening, applies the user's saved policy knobs before subscribing,
 * and saves the policy whenever the service reports a change (from the panel
 * or from `salus policy` in a terminal alike).
 */
import { EventEmitter } from 'node:events';
import { ServiceConnection } from '../core/client/connection.js';
import type { ConnectionState, ServiceEvent } from '../core/protocol/api.js';
import type { BridgeMethod } from '../core/protocol/bridge.js';
import type { ServerMessage } from '../core/protocol/messages.js';
import type { ServiceSnapshot } from '../core/protocol/state.js';
import type { PushPayloads, ServiceStatus } from './desktopApi.js';
import type { SettingsStore } from '../core/platform/settingsFile.js';

/** What the client needs of a control connection (a ServiceConnection). */
export interface ControlConnection {
  call<T = unknown>(method: string, ...params: unknown[]): Promise<T>;
  close(): void;
  on(event: 'message', listener: (message: ServerMessage) => void): unknown;
  on(event: 'close', listener: (error: Error | null) => void): unknown;
}

/** Opens a control connection to the service at `socketPath`. */
export type OpenConnection = (socketPath: string) => Promise<ControlConnection>;

/** The default: a real ServiceConnection, introduced as the desktop app. */
export const openServiceConnection: OpenConnection = (socketPath) =>
  ServiceConnection.open(socketPath, { role: 'control', name: 'Salus Desktop', pid: process.pid });

/** Events: `event` (ServiceEvent), `connection` (ConnectionState). */
export class ServiceClient extends EventEmitter {
  private connection: ControlConnection | null = null;
  private connecting: Promise<void> | null = null;
  private currentState: ConnectionState = 'closed';

  /** `beforeSubscribe` runs on every new connection before events flow (e.g. to apply saved knobs). */
  constructor(private readonly open: OpenConnection = openServiceConnection, private readonly beforeSubscribe?: (connection: ControlConnection) => Promise<void>) {
    super();
  }

  /** The connection's state now. */
  get state(): ConnectionState {
    return this.currentState;
  }

  /** Connects to `socketPath` (dropping any older connection) and subscribes to events. */
  connect(socketPath: string): Promise<void> {
    this.disconnect();
    this.setState('connecting');
    const attempt = this.openAndSubscribe(socketPath).finally(() => {
      if (this.connecting === attempt) this.connecting = null;
    });
    this.connecting = attempt;
    return attempt;
  }

  /** Closes the connection, if any. */
  disconnect(): void {
    const connection = this.connection;
    this.connection = null;
    connection?.close();
    this.setState('closed');
  }

  /** A control call; rejects at once, saying why, when the service is not connected. */
  call<T = unknown>(method: BridgeMethod, ...params: unknown[]): Promise<T> {
    if (!this.connection || this.currentState !== 'open') {
      return Promise.reject(new Error('the Salus service is not connected (it is starting or restarting); try again in a moment'));
    }
    return this.connection.call<T>(method, ...params);
  }

  private async openAndSubscribe(socketPath: string): Promise<void> {
    let connection: ControlConnection;
    try {
      connection = await this.open(socketPath);
    } catch (error) {
      if (this.currentState === 'connecting') this.setState('closed');
      throw error;
    }
    // A newer connect() or a disconnect() came while this one was opening.
    if (this.currentState !== 'connecting' || this.connection) {
      connection.close();
      return;
    }
    this.connection = connection;
    connection.on('message', (message) => {
      if (message.t === 'event' && this.connection === connection) this.emit('event', message.event);
    });
    connection.on('close', () => {
      if (this.connection !== connection) return;
      this.connection = null;
      this.setState('closed');
    });
    try {
      await this.beforeSubscribe?.(connection);
      await connection.call('subscribe');
    } catch (error) {
      // Half-open is no state to stay in: drop it, so the caller's retry starts clean.
      if (this.connection === connection) {
        this.connection = null;
        connection.close();
        this.setState('closed');
      }
      throw error;
    }
    if (this.connection === connection) this.setState('open');
  }

  private setState(state: ConnectionState): void {
    if (state === this.currentState) return;
    this.currentState = state;
    this.emit('connection', state);
  }
}

/** Sends a push to the renderer (a no-op while there is no window). */
export type PushToRenderer = <K extends keyof PushPayloads>(channel: K, payload: PushPayloads[K]) => void;

/** Where the client's events go and what it keeps in step with. */
export interface ServiceClientSetup {
  client: ServiceClient;
  supervisor: { status: ServiceStatus; on(event: 'status', listener: (status: ServiceStatus) => void): unknown };
  settings: Pick<SettingsStore, 'get' | 'update'>;
  push: PushToRenderer;
  log?: (message: string) => void;
  /** Delay before retrying a failed connect while the service is up. Default 1 s. */
  retryMs?: number;
}

/** What the main process can ask of the wiring later. */
export interface ServiceClientControl {
  /**
   * Pushes the connection state, the service status and (when connected) a
   * fresh snapshot: for a page that has just loaded and may have missed pushes
   * sent while it was starting.
   */
  resync(): void;
}

/**
 * Connects the client whenever the service listens, relays its events and
 * connection state to the renderer, relays the supervisor's status, and keeps
 * the saved policy in step with the service's.
 */
export function setupServiceClient({ client, supervisor, settings, push, log = console.error, retryMs = 1_000 }: ServiceClientSetup): ServiceClientControl {
  const connectNow = () => {
    if (supervisor.status.state !== 'running') return;
    client.connect(supervisor.status.socketPath).catch((error: Error) => {
      log(`salus desktop: cannot connect to the service: ${error.message}`);
      setTimeout(() => { if (client.state === 'closed') connectNow(); }, retryMs).unref();
    });
  };
  supervisor.on('status', (status) => {
    push('serviceStatus', status);
    if (status.state === 'running') connectNow();
    else if (client.state !== 'closed') client.disconnect();
  });
  client.on('connection', (state: ConnectionState) => push('connection', state));
  client.on('event', (event: ServiceEvent) => {
    if (event.type === 'policy') {
      try {
        settings.update({ policy: { name: event.policy.name, params: event.policy.params } });
      } catch (error) {
        log(`salus desktop: cannot save the policy: ${(error as Error).message}`);
      }
    }
    push('event', event);
  });
  connectNow();
  return {
    resync() {
      push('serviceStatus', supervisor.status);
      push('connection', client.state);
      if (client.state !== 'open') return;
      client.call<ServiceSnapshot>('snapshot').then(
        (snapshot) => push('event', { type: 'snapshot', snapshot }),
        (error: Error) => log(`salus desktop: cannot resync the panel: ${error.message}`),
      );
    },
  };
}

/** Applies the saved knobs on a fresh connection (the policy's name went in as `--policy`). */
export function applySavedKnobs(settings: Pick<SettingsStore, 'get'>, log: (message: string) => void = console.error) {
  return async (connection: ControlConnection): Promise<void> => {
    const params = settings.get().policy?.params;
    if (!params || Object.keys(params).length === 0) return;
    try {
      await connection.call('setPolicyParams', params);
    } catch (error) {
      // Knobs saved by another version may no longer exist; the policy still runs with its defaults.
      log(`salus desktop: saved policy knobs not applied: ${(error as Error).message}`);
    }
  };
}
