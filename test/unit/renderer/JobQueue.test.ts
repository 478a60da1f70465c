// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { act, cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { JobInfo } from '../../../core/protocol/state.js';
import { JobQueue } from '../../../renderer/src/components/JobQueue.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { giveElementsHeight, renderPanel } from './fakeApi.js';

let restoreHeight: () => void;
beforeAll(() => { restoreHeight = giveElementsHeight(600); });
afterAll(() => restoreHeight());
afterEach(cleanup);

const rowOf = (name: string) => screen.getByRole('button', { name: `Details of ${name}` }).closest('[role="row"]') as HTMLElement;

describe('JobQueue', () => {
  it('shows each job with its state, progress, ETA, timing, memory and lane', () => {
    renderPanel(createElement(JobQueue));
    const row = within(rowOf('resnet50-imagenet'));
    expect(row.getByText('running')).toBeInTheDocument();
    expect(row.getByText('(iterating now)')).toBeInTheDocument();
    expect(row.getByText('4,210 / 10,000')).toBeInTheDocument();
    // (10,000 − 4,210) × 182.4 ms = 17 min 36 s
    expect(row.getByText('ETA 17 min 36 s')).toBeInTheDocument();
    expect(row.getByText('182 ms')).toBeInTheDocument();
    expect(row.getByText('1.60 GiB')).toBeInTheDocument();
    expect(row.getByText('3.20 GiB')).toBeInTheDocument();
    expect(row.getByText('lane-0')).toBeInTheDocument();
    expect(row.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '4210');
    expect(row.getByLabelText('Priority of resnet50-imagenet')).toHaveValue(2);

    const server = within(rowOf('gpt2-small-serve'));
    expect(server.getByText('15,233 it · open-ended')).toBeInTheDocument();
    expect(server.queryByText(/ETA/)).toBeNull();
    expect(within(rowOf('bert-base-squad')).getByText('(iterating now)')).toBeInTheDocument();
    expect(within(rowOf('mnist-mlp-sweep-07')).queryByText('(iterating now)')).toBeNull();
  });

  it('pauses, resumes and kills (kill after a confirming second press) through the API', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(JobQueue));
    await user.click(screen.getByRole('button', { name: 'Pause resnet50-imagenet' }));
    expect(api.pauseJob).toHaveBeenCalledWith('a3f9c2');
    await user.click(screen.getByRole('button', { name: 'Resume espcn-superres' }));
    expect(api.resumeJob).toHaveBeenCalledWith('7d2b90');

    await user.click(screen.getByRole('button', { name: 'Kill bert-base-squad' }));
    expect(api.killJob).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Confirm: kill bert-base-squad' }));
    expect(api.killJob).toHaveBeenCalledWith('5be017');
    // Finished jobs have nothing to pause or kill.
    expect(within(rowOf('lstm-ptb')).queryByRole('button', { name: /Kill|Pause|Resume/ })).toBeNull();
  });

  it('sends a new priority on Enter, and none when Escape reverts the edit', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(JobQueue));
    const input = screen.getByLabelText('Priority of mnist-mlp-sweep-07');
    await user.clear(input);
    await user.type(input, '7{Enter}');
    expect(api.setPriority).toHaveBeenCalledWith('0c44d8', 7);

    const other = screen.getByLabelText('Priority of whisper-tiny-batch');
    await user.clear(other);
    await user.type(other, '9{Escape}');
    await user.tab();
    expect(api.setPriority).toHaveBeenCalledTimes(1);
    expect(other).toHaveValue(0);
  });

  it('sorts by a column header and filters by text and state', async () => {
    const user = userEvent.setup();
    renderPanel(createElement(JobQueue));
    const names = () => screen.getAllByRole('button', { name: /^Details of / }).map((button) => button.getAttribute('aria-label')!.slice(11));

    await user.click(screen.getByRole('button', { name: /^Priority/ }));
    await user.click(screen.getByRole('button', { name: /^Priority/ }));
    expect(screen.getByRole('columnheader', { name: /Priority/ })).toHaveAttribute('aria-sort', 'descending');
    expect(names().slice(0, 2)).toEqual(['gpt2-small-serve', 'resnet50-imagenet']);

    await user.type(screen.getByLabelText('Filter jobs by name or id'), 'resnet');
    expect(names()).toEqual(['resnet50-imagenet', 'resnet18-cifar10']);
    expect(screen.getByText('2 of 10')).toBeInTheDocument();

    await user.selectOptions(screen.getByLabelText('Show jobs'), 'failed');
    expect(names()).toEqual(['resnet18-cifar10']);
  });

  it('opens the drawer for a job from its name or its row', async () => {
    const user = userEvent.setup();
    const { store } = renderPanel(createElement(JobQueue));
    await user.click(screen.getByRole('button', { name: 'Details of lstm-ptb' }));
    expect(store.getState().selectedJobId).toBe('b6730d');
    await user.click(within(rowOf('vgg16-cifar100')).getByText('0 / 20,000'));
    expect(store.getState().selectedJobId).toBe('29ce5a');
    // Controls in the row act on themselves only.
    await user.click(screen.getByLabelText('Priority of bert-base-squad'));
    expect(store.getState().selectedJobId).toBe('29ce5a');
  });

  it('renders only a window of rows when there are hundreds, and follows updates', () => {
    const snapshot = demoSnapshot(1);
    const template = snapshot.jobs[0];
    snapshot.jobs = Array.from({ length: 500 }, (_, i): JobInfo => ({
      ...structuredClone(template), id: `job${String(i).padStart(3, '0')}`, name: `sweep-${i}`, submittedAt: i,
    }));
    const { store } = renderPanel(createElement(JobQueue), { snapshot });
    const rows = screen.getAllByRole('row');
    expect(screen.getByRole('table')).toHaveAttribute('aria-rowcount', '501');
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.length).toBeLessThan(40);

    const next = structuredClone(store.getState().jobs);
    next[0].iterations.done = 9999;
    act(() => store.getState().applyEvent({ type: 'jobs', jobs: next }));
    expect(within(rowOf('sweep-0')).getByText('9,999 / 10,000')).toBeInTheDocument();
  });

  it('flags a job whose GPU work raised uncaptured errors, even when it finished done', () => {
    const snapshot = demoSnapshot(1);
    const job = snapshot.jobs.find((j) => j.name === 'lstm-ptb')!;
    job.gpuErrors = { count: 3, first: { type: 'out-of-memory', message: 'out of memory: job b6730d asked for 12 MiB' } };
    renderPanel(createElement(JobQueue), { snapshot });
    const flag = within(rowOf('lstm-ptb')).getByRole('img', { name: '3 uncaptured GPU errors' });
    expect(flag).toHaveAttribute('title', 'out-of-memory: out of memory: job b6730d asked for 12 MiB');
    expect(within(rowOf('lstm-ptb')).getByText('done')).toBeInTheDocument();
    // A clean job carries no flag.
    expect(within(rowOf('unet-carvana')).queryByRole('img', { name: /GPU error/ })).toBeNull();
  });

  it('says so when there is nothing to show', () => {
    const snapshot = demoSnapshot(1);
    snapshot.jobs = [];
    renderPanel(createElement(JobQueue), { snapshot });
    expect(screen.getByText(/No jobs yet/)).toBeInTheDocument();
  });
});
