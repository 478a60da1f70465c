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

/** Where this tab keeps the token once it has left the address bar. */
const TOKEN_KEY = 'salus.token';

/**
 * The panel's token: taken from the page's address on first load and removed
 * from it (so it is not left in the address bar, history or a screenshot),
 * else the one this tab kept from that load (a reload).
 */
export function takeToken(page: Pick<Window, 'location' | 'history' | 'sessionStorage'>): string {
  const params = new URLSearchParams(page.location.search);
  const fromAddress = params.get('token');
  if (fromAddress === null) return page.sessionStorage.getItem(TOKEN_KEY) ?? '';
  page.sessionStorage.setItem(TOKEN_KEY, fromAddress);
  params.delete('token');
  const rest = params.toString();
  page.history.replaceState(page.history.state, '', `${page.location.pathname}${rest ? `?${rest}` : ''}${page.location.hash}`);
  return fromAddress;
}

/** The bridge URL for a page served by `salus serve --http`: same host, `/api/events`, with `token`. */
export function eventsUrl(location: Pick<Location, 'protocol' | 'host'>, token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/api/events?token=${encodeURIComponent(token)}`;
}

/** Picks the host for this page: `window.salus` when present, else the WebSocket bridge. */
export function pickHost(page: Window & { salus?: SalusApi } = window): PanelHost {
  if (page.salus) return { kind: 'preload', api: page.salus };
  const api = createWsApi(eventsUrl(page.location, takeToken(page)));
  return { kind: 'websocket', api, reconnect: () => api.reconnect() };
}
