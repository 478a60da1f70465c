/** The panel's connection to the service, as the host reports it. */
import type { StateCreator } from 'zustand';
import type { ConnectionState } from '../../../core/protocol/api.js';
import type { PanelState } from './panelStore.js';

/** The connection state and what the banners need to describe it. */
export interface ConnectionSlice {
  connection: ConnectionState;
  /** True once the connection has been open at least once: "reconnecting", not "connecting". */
  everConnected: boolean;
  /** When the connection last closed (panel clock, epoch ms), or null while it has not. */
  closedAt: number | null;
  setConnection(state: ConnectionState): void;
}

/** The connection slice, `connecting` at first. */
export const createConnectionSlice: StateCreator<PanelState, [], [], ConnectionSlice> = (set, get) => ({
  connection: 'connecting',
  everConnected: false,
  closedAt: null,
  setConnection(connection) {
    if (get().connection === connection) return;
    set({
      connection,
      everConnected: get().everConnected || connection === 'open',
      closedAt: connection === 'closed' ? Date.now() : connection === 'open' ? null : get().closedAt,
    });
  },
});
