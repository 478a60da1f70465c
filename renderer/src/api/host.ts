/**
 * Where the panel finds its `SalusApi` (DESIGN.md decision 7): the Electron
 * preload exposes one as `window.salus`; in a browser on `salus serve --http`
 * the panel opens the bridge WebSocket itself, with the token from its own URL.
 */
import type { SalusApi } from '../../../core/protocol/api.js';
import { createWsApi } from './wsApi.js';

/** The API the panel talks to, and what the host lets it do about the connection. */
export interface PanelHost {
  /** `preload`: a `SalusApi` injected as `window.salus`; `websocket`: the bridge. */
  kind: 'preload' | 'websocket';
  api: SalusApi;
  /** Reconnects now; absent where the host manages the connection itself. */
  reconnect?: () => void;
}

/** The bridge URL for a page served by `salus serve --http`: same host, `/api/events`, the page's token. */
export function eventsUrl(location: Pick<Location, 'protocol' | 'host' | 'search'>): string {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/api/events?token=${encodeURIComponent(token)}`;
}

/** Picks the host for this page: `window.salus` when present, else the WebSocket bridge. */
export function pickHost(page: Window & { salus?: SalusApi } = window): PanelHost {
  if (page.salus) return { kind: 'preload', api: page.salus };
  const api = createWsApi(eventsUrl(page.location));
  return { kind: 'websocket', api, reconnect: () => api.reconnect() };
}
