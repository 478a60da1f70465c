/**
 * Banners across the top: a software GPU (SwiftShader) warning, and a notice
 * while the connection is down that what the panel shows may be stale.
 */
import { useState, type ReactElement } from 'react';
import { usePanel } from '../store/hooks.js';
import { CloseIcon, WarningIcon } from './icons.js';

/** Shown when the service's adapter is a CPU implementation; dismissible for this session. */
export function SoftwareGpuBanner(): ReactElement | null {
  const gpu = usePanel((state) => state.gpu);
  const [dismissed, setDismissed] = useState(false);
  if (!gpu?.isSoftware || dismissed) return null;
  return (
    <div className="banner banner-warning" role="status">
      <WarningIcon />
      <p>
        <strong>Running on a software GPU (SwiftShader):</strong> no hardware adapter was found, so jobs run on the CPU,
        far slower than on a real GPU.
      </p>
      <button type="button" className="icon-button" aria-label="Dismiss the software GPU notice" onClick={() => setDismissed(true)}>
        <CloseIcon />
      </button>
    </div>
  );
}

/** Shown while disconnected after having been connected: the data on screen is the last known. */
export function StaleBanner(): ReactElement | null {
  const connection = usePanel((state) => state.connection);
  const everConnected = usePanel((state) => state.everConnected);
  if (connection === 'open' || !everConnected) return null;
  return (
    <div className="banner banner-muted" role="status">
      <WarningIcon />
      <p>Lost the connection to the service. What you see is the last known state; it updates again once reconnected.</p>
    </div>
  );
}
