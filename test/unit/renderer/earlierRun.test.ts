// @vitest-environment happy-dom
/** Jobs of an earlier run of the service (its history) in the queue and the drawer: shown, marked, not controllable. */
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { cleanup, screen, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../../renderer/src/components/JobQueue.js';
import { JobDrawer } from '../../../renderer/src/components/JobDrawer.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { giveElementsHeight, renderPanel } from './fakeApi.js';

let restoreHeight: () => void;
beforeAll(() => { restoreHeight = giveElementsHeight(600); });
afterAll(() => restoreHeight());
afterEach(cleanup);

function snapshotWithEarlierJob() {
  const snapshot = demoSnapshot(1_700_000_000_000);
  const template = snapshot.jobs[0];
  snapshot.jobs.unshift({
    ...template, id: 'job-7', name: 'lost-before-restart', state: 'failed', lane: null, fromEarlierRun: true, runId: 3,
    error: 'lost with the service: the service ended unexpectedly while the job ran', finishedAt: 1_699_999_000_000,
  });
  return snapshot;
}

describe('jobs of an earlier run', () => {
  it('are listed with a tag saying so, and offer no controls', () => {
    renderPanel(createElement(JobQueue), { snapshot: snapshotWithEarlierJob() });
    const row = screen.getByRole('button', { name: 'Details of lost-before-restart' }).closest('[role="row"]') as HTMLElement;
    expect(row).toHaveClass('earlier-run');
    expect(within(row).getByText('earlier run')).toHaveAttribute('title', expect.stringMatching(/run 3 of the service/));
    expect(within(row).queryByRole('button', { name: /Kill|Pause|Resume/ })).toBeNull();
    // This run's jobs carry no tag.
    const current = screen.getByRole('button', { name: 'Details of resnet50-imagenet' }).closest('[role="row"]') as HTMLElement;
    expect(within(current).queryByText('earlier run')).toBeNull();
  });

  it('say where they come from in the drawer, with the reason they were lost', () => {
    const { store } = renderPanel(createElement(JobDrawer), { snapshot: snapshotWithEarlierJob() });
    store.getState().selectJob('job-7');
    cleanup();
    renderPanel(createElement(JobDrawer), { store });
    expect(screen.getByText(/job job-7 · from an earlier run of the service \(run 3\)/)).toBeInTheDocument();
    expect(screen.getByText(/lost with the service/)).toBeInTheDocument();
  });
});
