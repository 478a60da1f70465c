// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { act, cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { App } from '../../../renderer/src/components/App.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { createPanelStore } from '../../../renderer/src/store/panelStore.js';
import { giveElementsHeight, renderPanel } from './fakeApi.js';

// happy-dom has no canvas; the charts' drawing is uPlot's business, not this test's.
const charts = vi.hoisted(() => ({ created: 0, setData: 0 }));
vi.mock('uplot', () => ({
  default: class {
    width = 300;
    constructor() { charts.created += 1; }
    setData() { charts.setData += 1; }
    setSize() {}
    destroy() {}
  },
}));

let restoreHeight: () => void;
beforeAll(() => { restoreHeight = giveElementsHeight(600); });
afterAll(() => restoreHeight());
afterEach(cleanup);

describe('App', () => {
  it('lays out every view with the software GPU banner', () => {
    renderPanel(createElement(App));
    const banner = screen.getByText(/Running on a software GPU \(SwiftShader\):/).closest('[role="status"]');
    expect(banner).toHaveTextContent('jobs run on the CPU');
    expect(screen.getByRole('heading', { name: 'GPU memory' })).toBeInTheDocument();
    expect(screen.getByRole('table', { name: /Jobs/ })).toBeInTheDocument();
    expect(screen.getByRole('radiogroup', { name: 'Scheduling policy' })).toBeInTheDocument();
    expect(screen.getAllByRole('img', { name: /over the last minute/ })).toHaveLength(3);
    expect(screen.getByText('Connected')).toBeInTheDocument();
  });

  it('switches the job queue for the cluster\'s Slurm jobs on its tab, asking Slurm only then', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(App));
    expect(screen.getByRole('tab', { name: 'This machine' })).toHaveAttribute('aria-selected', 'true');
    expect(api.clusterJobs).not.toHaveBeenCalled();
    await user.click(screen.getByRole('tab', { name: 'Cluster (Slurm)' }));
    expect(await screen.findByRole('cell', { name: 'slurm-a' })).toBeInTheDocument();
    expect(screen.queryByRole('table', { name: /^Jobs/ })).toBeNull();
    await user.click(screen.getByRole('tab', { name: 'This machine' }));
    expect(screen.getByRole('table', { name: /^Jobs/ })).toBeInTheDocument();
  });

  it('shows no banner on a hardware GPU, and lets the banner be dismissed', async () => {
    const user = userEvent.setup();
    const snapshot = demoSnapshot(1);
    snapshot.gpu = { ...snapshot.gpu, isSoftware: false, device: 'NVIDIA H100' };
    renderPanel(createElement(App), { snapshot });
    expect(screen.queryByText(/software GPU/)).toBeNull();
    cleanup();
    renderPanel(createElement(App));
    await user.click(screen.getByRole('button', { name: 'Dismiss the software GPU notice' }));
    expect(screen.queryByText(/software GPU/)).toBeNull();
  });

  it('shows the connection state, and offers Reconnect while disconnected', async () => {
    const user = userEvent.setup();
    const reconnect = vi.fn();
    const { store } = renderPanel(createElement(App), { reconnect });
    expect(screen.queryByRole('button', { name: /Reconnect/ })).toBeNull();
    act(() => store.getState().setConnection('closed'));
    expect(screen.getByText('Disconnected')).toBeInTheDocument();
    expect(screen.getByText(/Lost the connection/)).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: /Reconnect/ }));
    expect(reconnect).toHaveBeenCalledOnce();
    act(() => store.getState().setConnection('connecting'));
    expect(screen.getByText('Reconnecting…')).toBeInTheDocument();
  });

  it('says Connecting… before the first connection, with no stale-data banner', () => {
    renderPanel(createElement(App), { store: createPanelStore() });
    expect(screen.getByText('Connecting…')).toBeInTheDocument();
    expect(screen.queryByText(/Lost the connection/)).toBeNull();
  });

  it('opens a job’s drawer with its details, full error and output (loaded, then live)', async () => {
    const user = userEvent.setup();
    const { api, store } = renderPanel(createElement(App));
    await user.click(screen.getByRole('button', { name: 'Details of resnet18-cifar10' }));
    const drawer = screen.getByRole('complementary', { name: 'resnet18-cifar10' });
    expect(within(drawer).getByText(/While calling \[Device\]\.CreateBindGroup/)).toBeInTheDocument();
    expect(within(drawer).getByText('671,088,640 bytes')).toBeInTheDocument();
    expect(api.jobOutput).toHaveBeenCalledWith('8e15f4');
    const output = within(drawer).getByLabelText('Job output');
    await vi.waitFor(() => expect(output).toHaveTextContent('output of 8e15f4'));
    act(() => store.getState().applyEvent({ type: 'output', jobId: '8e15f4', stream: 'stderr', text: 'one more line' }));
    expect(output).toHaveTextContent(/output of 8e15f4\s+one more line/);

    expect(within(drawer).getByRole('button', { name: 'Close details' })).toHaveFocus();
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('complementary', { name: 'resnet18-cifar10' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Details of resnet18-cifar10' })).toHaveFocus();
  });

  it('redraws the charts from metrics without rendering them through React', async () => {
    const { store } = renderPanel(createElement(App));
    const created = charts.created;
    const before = charts.setData;
    act(() => store.getState().applyEvent({ type: 'metrics', at: 5000, busyShare: 0.4, queueLength: 2, iterationsPerSecond: {} }));
    await vi.waitFor(() => expect(charts.setData).toBeGreaterThan(before));
    expect(charts.created).toBe(created);
    expect(screen.getByText('40%', { selector: '.chart-readout' })).toBeInTheDocument();
  });
});
