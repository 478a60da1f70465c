/**
 * The WebSocket protocol between the headless panel and `salus serve --http`
 * (`/api/events?token=TOKEN`). Each WebSocket message is one JSON object.
 *
 * - panel → service: a call of one `SalusApi` method, `{ id, method, params }`,
 *   where `params` is the method's arguments as an array.
 * - service → panel: the answer, `{ id, result }` or `{ id, error: { message } }`;
 *   and events, `{ event }`, the first of which is always a `snapshot`.
 */
import type { ServiceEvent } from './api.js';
import { PANEL_CALL_NAMES, type PanelCallName } from './calls.js';

/** SalusApi methods callable over the bridge: the panel's calls (the subscription is the socket itself). */
export type BridgeMethod = PanelCallName;

/** The bridge's methods, from the call table. */
export const BRIDGE_METHODS: readonly BridgeMethod[] = PANEL_CALL_NAMES;

export interface BridgeCall {
  id: number;
  method: BridgeMethod;
  params: unknown[];
}

export type BridgeMessage =
  | { id: number; result: unknown }
  | { id: number; error: { message: string } }
  | { event: ServiceEvent };
