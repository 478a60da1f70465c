// @vitest-environment happy-dom
/** The drawer shows what the service measured of a job's memory: its state between iterations, paged-out bytes, working set. */
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { cleanup, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { JobDrawer } from '../../../renderer/src/components/JobDrawer.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { renderPanel } from './fakeApi.js';

afterEach(cleanup);

type JobMemory = ReturnType<typeof demoSnapshot>['jobs'][number]['memory'];

/** Renders the drawer of the demo's first job, its memory figures changed by `edit`. */
function drawerFor(edit: (memory: JobMemory) => JobMemory) {
  const snapshot = demoSnapshot(1_700_000_000_000);
  const job = snapshot.jobs[0];
  job.memory = edit(job.memory);
  const { store } = renderPanel(createElement(JobDrawer), { snapshot });
  store.getState().selectJob(job.id);
  cleanup();
  renderPanel(createElement(JobDrawer), { store });
}

/** The value cell of the field labelled `label`. */
const valueOf = (label: string) => screen.getByText(label).closest('.field')!.querySelector('dd')!;

describe('the drawer\'s measured memory', () => {
  it('shows state, paged-out, working-set and live-in bytes with their exact figures', () => {
    drawerFor((memory) => ({ ...memory, stateBytes: 41_732, pagedOutBytes: 8 * 1024 * 1024, workingSetBytes: 105_588, liveInBytes: 22_784 }));
    expect(valueOf('State between iterations')).toHaveTextContent('40.8 KiB 41,732 bytes');
    expect(valueOf('Paged out to host memory')).toHaveTextContent(/^8(\.0+)? MiB 8,388,608 bytes$/);
    expect(valueOf('Working set (last iteration)')).toHaveTextContent(/105,588 bytes/);
    expect(valueOf('Of it, live-in')).toHaveTextContent(/22,784 bytes/);
  });

  it('says — where the service did not measure (a job from an older service)', () => {
    drawerFor(({ stateBytes: _state, ...older }) => older);
    expect(valueOf('State between iterations')).toHaveTextContent('—');
  });
});
