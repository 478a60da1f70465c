// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterView } from '../../../renderer/src/components/ClusterView.js';
import { createFakeApi, renderPanel } from './fakeApi.js';

afterEach(cleanup);

const rowOf = (text: string) => screen.getByRole('cell', { name: text }).closest('tr') as HTMLElement;

describe('ClusterView', () => {
  it('lists the cluster\'s Salus jobs with Slurm id, name, node, state and time', async () => {
    renderPanel(createElement(ClusterView));
    expect(await screen.findByRole('cell', { name: 'slurm-a' })).toBeInTheDocument();
    expect(screen.getAllByRole('columnheader').map((th) => th.textContent)).toEqual(['Slurm id', 'Name', 'Node', 'State', 'Time', 'Actions']);
    const running = within(rowOf('slurm-a'));
    expect(running.getByText('101')).toBeInTheDocument();
    expect(running.getByText('node1')).toBeInTheDocument();
    expect(running.getByText('RUNNING')).toBeInTheDocument();
    const pending = within(rowOf('slurm-b'));
    expect(pending.getByText('—')).toBeInTheDocument();
    expect(pending.getByText(/^waiting /)).toBeInTheDocument();
    // Ran 65 s; finished jobs have nothing to kill.
    const done = within(rowOf('slurm-old'));
    expect(done.getByText('1 min 5 s')).toBeInTheDocument();
    expect(done.queryByRole('button')).toBeNull();
    expect(screen.getByText('3')).toBeInTheDocument();
  });

  it('cancels a Slurm job after a confirming second press, then asks again', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(ClusterView));
    await user.click(await screen.findByRole('button', { name: 'Kill Slurm job 101' }));
    expect(api.killClusterJob).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Confirm: kill Slurm job 101' }));
    expect(api.killClusterJob).toHaveBeenCalledWith('101');
    await waitFor(() => expect(api.clusterJobs).toHaveBeenCalledTimes(2));
    // A pending job can be cancelled too.
    expect(screen.getByRole('button', { name: 'Kill Slurm job 102' })).toBeInTheDocument();
  });

  it('turns a refused scancel into a notice', async () => {
    const user = userEvent.setup();
    const api = createFakeApi();
    api.killClusterJob.mockRejectedValueOnce(new Error('salus: scancel failed (exit code 1): Invalid job id specified'));
    const { store } = renderPanel(createElement(ClusterView), { api });
    await user.click(await screen.findByRole('button', { name: 'Kill Slurm job 101' }));
    await user.click(screen.getByRole('button', { name: 'Confirm: kill Slurm job 101' }));
    await waitFor(() => expect(store.getState().notices.map((n) => n.text)).toContain('Could not cancel Slurm job 101 (slurm-a): salus: scancel failed (exit code 1): Invalid job id specified'));
  });

  it('says when this machine has no Slurm, when the cluster has no Salus jobs, and when squeue fails', async () => {
    const api = createFakeApi();
    api.clusterJobs.mockResolvedValueOnce({ available: false, reason: 'salus: Slurm not found (no `squeue` on PATH): install slurm-client' });
    renderPanel(createElement(ClusterView), { api });
    expect(await screen.findByText(/^Slurm not found on this machine\. salus: Slurm not found/)).toBeInTheDocument();
    expect(screen.queryByRole('table')).toBeNull();
    cleanup();

    api.clusterJobs.mockResolvedValueOnce({ available: true, jobs: [] });
    renderPanel(createElement(ClusterView), { api });
    expect(await screen.findByText(/^No Salus jobs in the cluster/)).toBeInTheDocument();
    cleanup();

    api.clusterJobs.mockRejectedValueOnce(new Error('salus: squeue failed: Unable to contact slurm controller'));
    renderPanel(createElement(ClusterView), { api });
    expect(await screen.findByText('Could not list the cluster\'s jobs: salus: squeue failed: Unable to contact slurm controller')).toBeInTheDocument();
  });

  it('asks again every few seconds while shown, and stops once gone', async () => {
    const { api, unmount } = renderPanel(createElement(ClusterView, { pollMs: 30 }));
    await waitFor(() => expect(api.clusterJobs.mock.calls.length).toBeGreaterThanOrEqual(3));
    unmount();
    const calls = api.clusterJobs.mock.calls.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(api.clusterJobs).toHaveBeenCalledTimes(calls);
  });
});
