/**
 * The connection to the service as a dot and a word, with a Reconnect button
 * while disconnected (where the host can reconnect on demand).
 */
import type { ReactElement } from 'react';
import { usePanel, useReconnect } from '../store/hooks.js';
import { RefreshIcon } from './icons.js';

/** "Connected", "Connecting…", "Reconnecting…" or "Disconnected", announced politely when it changes. */
export function ConnectionIndicator(): ReactElement {
  const connection = usePanel((state) => state.connection);
  const everConnected = usePanel((state) => state.everConnected);
  const reconnect = useReconnect();
  const label = connection === 'open' ? 'Connected'
    : connection === 'connecting' ? (everConnected ? 'Reconnecting…' : 'Connecting…')
      : 'Disconnected';
  return (
    <div className={`connection connection-${connection}`}>
      <span role="status" className="connection-status">
        <span className="connection-dot" aria-hidden="true" />
        {label}
      </span>
      {connection === 'closed' && reconnect ? (
        <button type="button" className="button small secondary" onClick={reconnect}>
          <RefreshIcon /> Reconnect
        </button>
      ) : null}
    </div>
  );
}
