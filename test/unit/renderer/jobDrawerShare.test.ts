// @vitest-environment happy-dom
/** The drawer edits a job's GPU share while it is active: a number above 0, sent on Enter; a plain figure once it ended. */
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { cleanup, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { JobDrawer } from '../../../renderer/src/components/JobDrawer.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { renderPanel } from './fakeApi.js';

afterEach(cleanup);

/** Renders the drawer of the demo's job in `state`. */
function drawerOf(state: 'running' | 'done') {
  const snapshot = demoSnapshot(1_700_000_000_000);
  const job = snapshot.jobs.find((j) => j.state === state)!;
  const panel = renderPanel(createElement(JobDrawer), { snapshot });
  panel.store.getState().selectJob(job.id);
  cleanup();
  return { job, ...renderPanel(createElement(JobDrawer), { store: panel.store, api: panel.api }) };
}

describe('the drawer\'s GPU share', () => {
  it('sends a new share of a running job on Enter, and none that is not above 0', async () => {
    const user = userEvent.setup();
    const { job, api } = drawerOf('running');
    const input = screen.getByLabelText(`GPU share of ${job.name}`);
    await user.clear(input);
    await user.type(input, '2.5{Enter}');
    expect(api.setShare).toHaveBeenCalledWith(job.id, 2.5);
    await user.clear(input);
    await user.type(input, '0{Enter}');
    expect(api.setShare).toHaveBeenCalledTimes(1);
  });

  it('shows the share of an ended job as a figure', () => {
    const { job } = drawerOf('done');
    expect(screen.queryByLabelText(`GPU share of ${job.name}`)).toBeNull();
  });
});
