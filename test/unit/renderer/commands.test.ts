import { describe, expect, it, vi } from 'vitest';
import type { PolicyInfo } from '../../../core/protocol/state.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { createCommands } from '../../../renderer/src/store/commands.js';
import { connectStore } from '../../../renderer/src/store/connect.js';
import { buildLaunchRequest, splitArgs } from '../../../renderer/src/store/launchRequest.js';
import { createPanelStore } from '../../../renderer/src/store/panelStore.js';
import { EMPTY_DRAFT } from '../../../renderer/src/store/uiSlice.js';
import { createFakeApi } from './fakeApi.js';

function setup() {
  const api = createFakeApi();
  const store = createPanelStore();
  store.getState().applySnapshot(demoSnapshot(1));
  return { api, store, commands: createCommands(api, store) };
}

/** A promise and its resolver, to hold an answer back. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

describe('commands', () => {
  it('turns a failed request into an error notice naming the job', async () => {
    const { api, store, commands } = setup();
    api.killJob.mockRejectedValueOnce(new Error('job already ended'));
    await commands.killJob('a3f9c2');
    expect(store.getState().notices).toEqual([expect.objectContaining({ tone: 'error', text: 'Could not kill resnet50-imagenet: job already ended' })]);
  });

  it('shows knob changes at once and sends one request at a time, merging what piles up', async () => {
    const { api, store, commands } = setup();
    const first = deferred<PolicyInfo>();
    api.setPolicyParams.mockImplementationOnce(() => first.promise);
    const done = commands.setPolicyParams({ maxLanes: 3 });
    expect(store.getState().policy?.params.maxLanes).toBe(3);
    void commands.setPolicyParams({ maxLanes: 4 });
    void commands.setPolicyParams({ laneGrowthPercent: 50 });
    expect(store.getState().policy?.params).toMatchObject({ maxLanes: 4, laneGrowthPercent: 50 });
    expect(api.setPolicyParams).toHaveBeenCalledTimes(1);

    // The first answer is stale by now: it must not pull the slider back to 3.
    first.resolve({ ...store.getState().policy!, params: { ...store.getState().policy!.params, maxLanes: 3, laneGrowthPercent: 25 } });
    await done;
    expect(api.setPolicyParams).toHaveBeenCalledTimes(2);
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 4, laneGrowthPercent: 50 });
    expect(store.getState().policy?.params).toMatchObject({ maxLanes: 4, laneGrowthPercent: 50 });
  });

  it('keeps the hand\'s knob values over service events that echo an older state while changes are on their way', async () => {
    const { api, store, commands } = setup();
    const first = deferred<PolicyInfo>();
    api.setPolicyParams.mockImplementationOnce(() => first.promise);
    const confirmed = store.getState().policy!;
    const done = commands.setPolicyParams({ maxLanes: 3 });
    // The service's event from before the change (or echoing an earlier one) arrives meanwhile.
    store.getState().applyEvent({ type: 'policy', policy: { ...confirmed, params: { ...confirmed.params, maxLanes: 2 } } });
    expect(store.getState().policy?.params.maxLanes).toBe(3);
    store.getState().applySnapshot({ ...demoSnapshot(2), policy: { ...confirmed, params: { ...confirmed.params, maxLanes: 2 } } });
    expect(store.getState().policy?.params.maxLanes).toBe(3);
    // So a second key press counts from 3, not from the echo.
    void commands.setPolicyParams({ maxLanes: store.getState().policy!.params.maxLanes as number + 1 });
    expect(store.getState().policy?.params.maxLanes).toBe(4);
    first.resolve({ ...confirmed, params: { ...confirmed.params, maxLanes: 3 } });
    await done;
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 4 });
    expect(store.getState().pendingParams).toBeNull();
    // Settled: the service's events are shown as they are again.
    store.getState().applyEvent({ type: 'policy', policy: { ...confirmed, params: { ...confirmed.params, maxLanes: 6 } } });
    expect(store.getState().policy?.params.maxLanes).toBe(6);
  });

  it('restores the confirmed knobs when the service refuses a change', async () => {
    const { api, store, commands } = setup();
    api.setPolicyParams.mockRejectedValueOnce(new Error('maxLanes must be ≤ 8'));
    await commands.setPolicyParams({ maxLanes: 9 });
    expect(store.getState().policy?.params.maxLanes).toBe(2);
    expect(store.getState().notices[0].text).toContain('maxLanes must be ≤ 8');
  });

  it('launches: uploads the file’s text, launches the returned path, closes the sheet, opens the job', async () => {
    const { api, store, commands } = setup();
    store.getState().openLaunch({ file: new File(['export default 1;'], 'train.mjs') });
    store.getState().updateDraft({ priority: '2', iterations: '300', args: `--lr 0.01 --tag "two words"` });
    await expect(commands.launch()).resolves.toBe(true);
    expect(api.uploadJob).toHaveBeenCalledWith('train.mjs', 'export default 1;');
    expect(api.launchJob).toHaveBeenCalledWith({
      file: '/srv/salus/jobs/train.mjs', name: 'train', args: ['--lr', '0.01', '--tag', 'two words'], hints: { priority: 2, iterations: 300 },
    });
    expect(api.uploadJob.mock.invocationCallOrder[0]).toBeLessThan(api.launchJob.mock.invocationCallOrder[0]);
    expect(store.getState().launch.open).toBe(false);
    expect(store.getState().selectedJobId).toBe('new-job');
  });

  it('launches a desktop drop in place, by path, without uploading it', async () => {
    const { api, store, commands } = setup();
    const pathForDroppedFile = vi.fn(async () => '/home/ada/jobs/train.mjs');
    Object.assign(api, { pathForDroppedFile });
    const dropped = new File(['export default 1;'], 'train.mjs');
    store.getState().openLaunch({ file: dropped });
    await expect(commands.launch()).resolves.toBe(true);
    expect(pathForDroppedFile).toHaveBeenCalledWith(dropped);
    expect(api.uploadJob).not.toHaveBeenCalled();
    expect(api.launchJob).toHaveBeenCalledWith(expect.objectContaining({ file: '/home/ada/jobs/train.mjs' }));
  });

  it('keeps the sheet open with the reason when launching fails or the draft is wrong', async () => {
    const { api, store, commands } = setup();
    store.getState().openLaunch();
    await expect(commands.launch()).resolves.toBe(false);
    expect(store.getState().launch.error).toMatch(/Choose a job file/);

    store.getState().updateDraft({ file: new File(['x'], 'a.js'), iterations: '0' });
    await commands.launch();
    expect(store.getState().launch.error).toMatch(/Iterations must be/);
    expect(api.uploadJob).not.toHaveBeenCalled();

    store.getState().updateDraft({ iterations: '' });
    api.launchJob.mockRejectedValueOnce(new Error('job file not found'));
    await commands.launch();
    expect(store.getState().launch).toMatchObject({ open: true, submitting: false, error: 'job file not found' });
  });
});

describe('launch request', () => {
  it('splits arguments like a shell', () => {
    expect(splitArgs('')).toEqual([]);
    expect(splitArgs(`  -a  1 --name 'x y' "say \\"hi\\"" a\\ b ''`)).toEqual(['-a', '1', '--name', 'x y', 'say "hi"', 'a b', '']);
    expect(() => splitArgs(`"open`)).toThrow(/Unclosed double quote/);
  });

  it('leaves out what the user did not give', () => {
    expect(buildLaunchRequest({ ...EMPTY_DRAFT, priority: '' }, '/f.js')).toEqual({ request: { file: '/f.js', args: [], hints: { priority: 0 } } });
    expect(buildLaunchRequest({ ...EMPTY_DRAFT, priority: '1.5' }, '/f.js')).toEqual({ error: 'Priority must be a whole number.' });
  });
});

describe('connectStore', () => {
  it('loads a snapshot at start, applies events, and reloads after a reconnect', async () => {
    const api = createFakeApi();
    const store = createPanelStore();
    const stop = connectStore(store, api);
    await vi.waitFor(() => expect(store.getState().jobs).toHaveLength(10));
    // The host never said it was open, but it answered: that is open.
    expect(store.getState().connection).toBe('open');

    api.emit({ type: 'jobs', jobs: [] });
    expect(store.getState().jobs).toHaveLength(0);

    api.setConnection('closed');
    expect(store.getState().connection).toBe('closed');
    api.setConnection('open');
    await vi.waitFor(() => expect(store.getState().jobs).toHaveLength(10));
    expect(api.snapshot).toHaveBeenCalledTimes(2);

    stop();
    api.emit({ type: 'jobs', jobs: [] });
    expect(store.getState().jobs).toHaveLength(10);
  });
});
