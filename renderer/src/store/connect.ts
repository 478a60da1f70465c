/**
 * Wires a store to a `SalusApi`: events go to `applyEvent`, connection changes
 * to `setConnection`, and a fresh snapshot is fetched at start and after every
 * reconnect so nothing missed while away stays stale.
 */
import type { SalusApi } from '../../../core/protocol/api.js';
import type { PanelStore } from './panelStore.js';

/** Starts feeding `store` from `api`; returns the function that stops it. */
export function connectStore(store: PanelStore, api: SalusApi): () => void {
  let stopped = false;
  let wasClosed = false;

  const refresh = () => {
    api.snapshot().then(
      (snapshot) => {
        if (stopped) return;
        store.getState().applySnapshot(snapshot);
        // A host that never reports its connection is evidently connected.
        if (store.getState().connection === 'connecting') store.getState().setConnection('open');
      },
      () => {
        // The host reports the connection state; a retry follows the next 'open'.
      },
    );
  };

  const stopEvents = api.subscribe((event) => store.getState().applyEvent(event));
  const stopConnection = api.onConnection((connection) => {
    store.getState().setConnection(connection);
    if (connection === 'closed') wasClosed = true;
    if (connection === 'open' && wasClosed) {
      wasClosed = false;
      refresh();
    }
  });
  refresh();

  return () => {
    stopped = true;
    stopEvents();
    stopConnection();
  };
}
