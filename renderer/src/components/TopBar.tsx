/**
 * The top bar: the Salus mark, the GPU the service owns, the job counts and
 * busy share at a glance, the connection, and the Launch button.
 */
import type { ReactElement } from 'react';
import { formatPercent } from '../format.js';
import { countByState } from '../store/jobView.js';
import { usePanel, usePanelShallow } from '../store/hooks.js';
import { ConnectionIndicator } from './ConnectionIndicator.js';
import { SalusMark, UploadIcon } from './icons.js';

/** The app's header row. */
export function TopBar(): ReactElement {
  const gpu = usePanel((state) => state.gpu);
  const version = usePanel((state) => state.version);
  const gpuCount = usePanel((state) => state.memory?.gpus?.length ?? 1);
  const busyShare = usePanel((state) => state.busyShare);
  const counts = usePanelShallow((state) => countByState(state.jobs));
  const openLaunch = usePanel((state) => state.openLaunch);
  return (
    <header className="top-bar">
      <div className="brand">
        <SalusMark />
        <h1>Salus</h1>
        {version ? <span className="version">v{version}</span> : null}
      </div>
      {gpu ? (
        <div className="gpu-chip" title={[gpu.description, gpu.device, gpu.vendor].filter(Boolean).join(' · ')}>
          <span className={`gpu-kind${gpu.isSoftware ? ' software' : ''}`}>{gpu.isSoftware ? 'software' : 'GPU'}</span>
          {/* The adapter's description names it as the service's log does ("SwiftShader driver 5.0.0"); `device` is often an internal id or empty. */}
          <span className="truncate">{gpu.description || gpu.device || gpu.vendor}</span>
          <span className="muted" style={{ whiteSpace: 'nowrap' }}>{gpu.backend}{gpuCount > 1 ? ` · ${gpuCount} GPUs` : ''}</span>
        </div>
      ) : null}
      <dl className="top-stats">
        <div><dt>running</dt><dd>{counts.running}</dd></div>
        <div><dt>paused</dt><dd>{counts.paused}</dd></div>
        <div><dt>queued</dt><dd>{counts.queued}</dd></div>
        <div><dt>busy</dt><dd>{formatPercent(busyShare)}</dd></div>
      </dl>
      <div className="top-actions">
        <ConnectionIndicator />
        <button type="button" className="button primary" onClick={() => openLaunch()}>
          <UploadIcon /> Launch job…
        </button>
      </div>
    </header>
  );
}
