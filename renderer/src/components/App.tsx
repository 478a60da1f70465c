/**
 * The panel's layout: top bar and banners; the memory map over the job queue
 * (or, on its tab, the cluster's Slurm jobs)
 * on the left, the policy and the activity charts on the right; the drawer,
 * the launch sheet, drag and drop and notices above it all.
 */
import { useState, type ReactElement } from 'react';
import { usePanel } from '../store/hooks.js';
import { SoftwareGpuBanner, StaleBanner } from './Banner.js';
import { Charts } from './Charts.js';
import { ClusterView } from './ClusterView.js';
import { DropOverlay } from './DropOverlay.js';
import { JobDrawer } from './JobDrawer.js';
import { JobQueue } from './JobQueue.js';
import { LaunchSheet } from './LaunchSheet.js';
import { MemoryMap } from './MemoryMap.js';
import { Notices } from './Notices.js';
import { PolicyPanel } from './PolicyPanel.js';
import { TopBar } from './TopBar.js';

/** The whole panel. Expects a `PanelContext` provider above it. */
export function App(): ReactElement {
  const drawerOpen = usePanel((state) => state.selectedJobId !== null);
  const stale = usePanel((state) => state.connection !== 'open' && state.everConnected);
  const [tab, setTab] = useState<'queue' | 'cluster'>('queue');
  return (
    <div className={`app${drawerOpen ? ' drawer-open' : ''}${stale ? ' stale' : ''}`}>
      <TopBar />
      <SoftwareGpuBanner />
      <StaleBanner />
      <main className="workspace">
        <div className="main-column">
          <MemoryMap />
          <div role="tablist" aria-label="Jobs to show" className="view-tabs">
            <button type="button" role="tab" aria-selected={tab === 'queue'} className="view-tab" onClick={() => setTab('queue')}>This machine</button>
            <button type="button" role="tab" aria-selected={tab === 'cluster'} className="view-tab" onClick={() => setTab('cluster')}>Cluster (Slurm)</button>
          </div>
          {tab === 'queue' ? <JobQueue /> : <ClusterView />}
        </div>
        <aside className="side-column" aria-label="Policy and activity">
          <PolicyPanel />
          <Charts />
        </aside>
      </main>
      <JobDrawer />
      <LaunchSheet />
      <DropOverlay />
      <Notices />
    </div>
  );
}
