/**
 * The WebSocket protocol between the headless panel and `salus serve --http`
 * (`/api/events?token=TOKEN`). Each WebSocket message is one JSON object.
 *
 * - panel → service: a call of one `SalusApi` method, `{ id, method, params }`,
 *   where `params` is the method's arguments as an array.
 * - service → panel: the answer, `{ id, result }` or `{ id, error: { message } }`;
 *   and events, `{ event }`, the first of which is always a `snapshot`.
 */
import type { SalusApi, ServiceEvent } from './api.js';

/** SalusApi methods callable over the bridge (the subscription ones are the socket itself; dropped-file paths are the desktop host's own). */
export type BridgeMethod = Exclude<keyof SalusApi, 'subscribe' | 'onConnection' | 'pathForDroppedFile'>;

export const BRIDGE_METHODS: readonly BridgeMethod[] = [
  'snapshot', 'setPolicy', 'setPolicyParams', 'killJob', 'pauseJob', 'resumeJob',
  'setPriority', 'launchJob', 'uploadJob', 'jobOutput', 'exampleJobs', 'clusterJobs', 'killClusterJob',
];

export interface BridgeCall {
  id: number;
  method: BridgeMethod;
  params: unknown[];
}

export type BridgeMessage =
  | { id: number; result: unknown }
  | { id: number; error: { message: string } }
  | { event: ServiceEvent };
