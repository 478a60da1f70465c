// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement, Fragment } from 'react';
import { act, cleanup, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { DropOverlay } from '../../../renderer/src/components/DropOverlay.js';
import { LaunchSheet } from '../../../renderer/src/components/LaunchSheet.js';
import { Notices } from '../../../renderer/src/components/Notices.js';
import { TopBar } from '../../../renderer/src/components/TopBar.js';
import { renderPanel } from './fakeApi.js';

afterEach(cleanup);

const panel = () => createElement(Fragment, null, createElement(TopBar), createElement(LaunchSheet), createElement(DropOverlay), createElement(Notices));

/** Dispatches a drag event carrying `files` on window, as a file manager would. */
function dragFiles(type: string, files: File[]): Event {
  const event = new Event(type, { bubbles: true, cancelable: true });
  Object.defineProperty(event, 'dataTransfer', { value: { types: ['Files'], files, dropEffect: 'none' } });
  act(() => { window.dispatchEvent(event); });
  return event;
}

describe('LaunchSheet', () => {
  it('opens from the top bar, uploads the chosen file’s text, then launches it', async () => {
    const user = userEvent.setup();
    const { api, store } = renderPanel(panel());
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    const dialog = screen.getByRole('dialog', { name: 'Launch a job' });
    expect(dialog).toHaveAttribute('aria-modal', 'true');
    expect(screen.getByRole('button', { name: 'Launch' })).toBeDisabled();

    const file = new File(['navigator.gpu.requestAdapter();'], 'train-mnist.mjs', { type: 'text/javascript' });
    await user.upload(screen.getByLabelText('Job file'), file);
    expect(screen.getByLabelText('Name')).toHaveValue('train-mnist');
    await user.clear(screen.getByLabelText('Priority'));
    await user.type(screen.getByLabelText('Priority'), '3');
    await user.type(screen.getByLabelText('Iterations'), '500');
    await user.type(screen.getByLabelText('Arguments'), '--epochs 5 --out "my dir"');
    await user.click(screen.getByRole('button', { name: 'Launch' }));

    expect(api.uploadJob).toHaveBeenCalledWith('train-mnist.mjs', 'navigator.gpu.requestAdapter();');
    expect(api.launchJob).toHaveBeenCalledWith({
      file: '/srv/salus/jobs/train-mnist.mjs',
      name: 'train-mnist',
      args: ['--epochs', '5', '--out', 'my dir'],
      hints: { priority: 3, iterations: 500 },
    });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(store.getState().selectedJobId).toBe('new-job');
  });

  it('offers the shipped examples: one click launches one by its path and opens the new job', async () => {
    const user = userEvent.setup();
    const { api, store } = renderPanel(panel());
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    const example = await screen.findByRole('button', { name: 'Run example tfjs-train' });
    expect(example).toHaveTextContent('TensorFlow.js on its WebGPU backend.');
    expect(screen.getByRole('button', { name: 'Run example wgsl-train' })).toBeInTheDocument();
    await user.click(example);
    expect(api.launchJob).toHaveBeenCalledWith({ file: '/opt/salus/assets/jobs/tfjs-train.js', name: 'tfjs-train' });
    expect(api.uploadJob).not.toHaveBeenCalled();
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(store.getState().selectedJobId).toBe('new-job');
    // Loaded once, not at every opening.
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    expect(api.exampleJobs).toHaveBeenCalledTimes(1);
  });

  it('says which example failed to launch, and stays open', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(panel());
    api.launchJob.mockRejectedValueOnce(new Error('the job exited (code 1) before connecting'));
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    await user.click(await screen.findByRole('button', { name: 'Run example wgsl-train' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('wgsl-train: the job exited (code 1) before connecting');
    expect(screen.getByRole('dialog', { name: 'Launch a job' })).toBeInTheDocument();
  });

  it('shows why a launch failed and stays open', async () => {
    const user = userEvent.setup();
    const { api, store } = renderPanel(panel());
    api.uploadJob.mockRejectedValueOnce(new Error('jobs folder is not writable'));
    act(() => store.getState().openLaunch({ file: new File(['x'], 'a.js') }));
    await user.click(screen.getByRole('button', { name: 'Launch' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('jobs folder is not writable');
    expect(screen.getByRole('dialog')).toBeInTheDocument();
    expect(api.launchJob).not.toHaveBeenCalled();
  });

  it('closes on Escape and on Cancel without launching', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(panel());
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
    await user.click(screen.getByRole('button', { name: /Launch job/ }));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(api.uploadJob).not.toHaveBeenCalled();
  });

  it('opens with the file when a .js or .mjs file is dropped anywhere on the window', () => {
    const { store } = renderPanel(panel());
    const file = new File(['x'], 'bert-finetune.js');
    dragFiles('dragenter', [file]);
    expect(screen.getByText('Drop to launch')).toBeInTheDocument();
    const over = dragFiles('dragover', [file]);
    expect(over.defaultPrevented).toBe(true);
    const drop = dragFiles('drop', [file]);
    expect(drop.defaultPrevented).toBe(true);
    expect(screen.queryByText('Drop to launch')).toBeNull();
    expect(screen.getByRole('dialog', { name: 'Launch a job' })).toHaveTextContent('bert-finetune.js');
    expect(store.getState().launch.draft.name).toBe('bert-finetune');
  });

  it('refuses a dropped file that is not a job, with a notice', () => {
    renderPanel(panel());
    dragFiles('dragenter', [new File(['x'], 'weights.bin')]);
    dragFiles('drop', [new File(['x'], 'weights.bin')]);
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.getByRole('alert')).toHaveTextContent('weights.bin is not a job file');
  });
});
