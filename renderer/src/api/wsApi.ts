/**
 * `SalusApi` over the bridge WebSocket of `salus serve --http`
 * (core/protocol/bridge.ts): calls go out as `{ id, method, params }`, answers
 * and `{ event }` messages come back. The socket reconnects by itself with
 * exponential backoff; every call still waiting when it closes is rejected, so
 * no caller hangs on a connection that is gone.
 */
// First: zod must be jitless before the call table's schemas are built.
import './zodJitless.js';
import type { ConnectionState, SalusApi, ServiceEvent } from '../../../core/protocol/api.js';
import { BRIDGE_METHODS, type BridgeCall, type BridgeMessage, type BridgeMethod } from '../../../core/protocol/bridge.js';
import type { PanelMethods } from '../../../core/protocol/calls.js';

/** The part of the DOM `WebSocket` this module uses, so tests can pass a fake. */
export interface SocketLike {
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  send(data: string): void;
  close(): void;
}

/** Knobs for tests and tuning; the defaults suit a local service. */
export interface WsApiOptions {
  /** Socket constructor; the page's `WebSocket` unless given. */
  WebSocket?: new (url: string) => SocketLike;
  /** First reconnect delay; doubles per failed attempt. Default 250 ms. */
  initialBackoffMs?: number;
  /** Longest reconnect delay. Default 10 s. */
  maxBackoffMs?: number;
}

/** `SalusApi` plus control of the socket itself. */
export interface WsApi extends SalusApi {
  /** The connection's state now. */
  readonly state: ConnectionState;
  /** Tries to connect now instead of waiting out the backoff; no-op while open or connecting. */
  reconnect(): void;
  /** Closes for good: no more reconnects, pending calls rejected. */
  close(): void;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * Opens the bridge at `url` (e.g. `ws://127.0.0.1:7878/api/events?token=…`) and
 * returns the API at once. Calls made while connecting are sent when the socket
 * opens; calls made while disconnected are rejected immediately. `onConnection`
 * listeners also hear the current state when they subscribe.
 */
export function createWsApi(url: string, options: WsApiOptions = {}): WsApi {
  const SocketImpl = options.WebSocket ?? (globalThis.WebSocket as unknown as new (url: string) => SocketLike);
  const initialBackoffMs = options.initialBackoffMs ?? 250;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;

  const eventListeners = new Set<(event: ServiceEvent) => void>();
  const connectionListeners = new Set<(state: ConnectionState) => void>();
  const pending = new Map<number, Pending>();
  let unsent: BridgeCall[] = [];
  let socket: SocketLike | null = null;
  let state: ConnectionState = 'connecting';
  let nextId = 1;
  let failedAttempts = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let closedForGood = false;

  function setState(next: ConnectionState): void {
    if (state === next) return;
    state = next;
    for (const listener of [...connectionListeners]) listener(next);
  }

  function failPending(reason: string): void {
    const error = new Error(reason);
    unsent = [];
    const waiting = [...pending.values()];
    pending.clear();
    for (const call of waiting) call.reject(error);
  }

  function handleMessage(data: unknown): void {
    let message: BridgeMessage;
    try {
      message = JSON.parse(String(data)) as BridgeMessage;
    } catch {
      return; // Not ours to crash on: the service only sends JSON.
    }
    if ('event' in message) {
      for (const listener of [...eventListeners]) listener(message.event);
      return;
    }
    const call = pending.get(message.id);
    if (!call) return;
    pending.delete(message.id);
    if ('error' in message) call.reject(new Error(message.error.message));
    else call.resolve(message.result);
  }

  function scheduleRetry(): void {
    if (closedForGood) return;
    const base = Math.min(maxBackoffMs, initialBackoffMs * 2 ** failedAttempts);
    failedAttempts += 1;
    // Jitter keeps many panels from reconnecting in lockstep after a restart.
    retryTimer = setTimeout(connect, base * (0.75 + Math.random() * 0.25));
  }

  function connect(): void {
    clearTimeout(retryTimer);
    retryTimer = undefined;
    setState('connecting');
    const ws = new SocketImpl(url);
    socket = ws;
    ws.onopen = () => {
      if (socket !== ws) return;
      failedAttempts = 0;
      setState('open');
      const queued = unsent;
      unsent = [];
      for (const call of queued) ws.send(JSON.stringify(call));
    };
    ws.onmessage = (event) => {
      if (socket === ws) handleMessage(event.data);
    };
    ws.onerror = () => {
      // A close event always follows an error; it does the cleanup.
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      socket = null;
      failPending('The connection to the service closed before it answered.');
      setState('closed');
      scheduleRetry();
    };
  }

  function call<T>(method: BridgeMethod, params: unknown[]): Promise<T> {
    if (state === 'closed') return Promise.reject(new Error('Not connected to the service.'));
    return new Promise<T>((resolve, reject) => {
      const message: BridgeCall = { id: nextId++, method, params };
      pending.set(message.id, { resolve: resolve as (value: unknown) => void, reject });
      if (state === 'open' && socket) socket.send(JSON.stringify(message));
      else unsent.push(message);
    });
  }

  // One method per panel call; trailing undefined arguments are not sent (JSON would make them nulls).
  const panelMethods = Object.fromEntries(BRIDGE_METHODS.map((method) => [method, (...args: unknown[]) => {
    let end = args.length;
    while (end > 0 && args[end - 1] === undefined) end -= 1;
    return call(method, args.slice(0, end));
  }])) as unknown as PanelMethods;

  connect();

  return {
    get state() {
      return state;
    },
    reconnect() {
      if (closedForGood || state !== 'closed') return;
      failedAttempts = 0;
      connect();
    },
    close() {
      closedForGood = true;
      clearTimeout(retryTimer);
      const ws = socket;
      socket = null;
      ws?.close();
      failPending('The connection to the service was closed.');
      setState('closed');
    },
    subscribe(listener) {
      eventListeners.add(listener);
      return () => eventListeners.delete(listener);
    },
    onConnection(listener) {
      connectionListeners.add(listener);
      listener(state);
      return () => connectionListeners.delete(listener);
    },
    ...panelMethods,
  };
}
