import { describe, expect, it } from 'vitest';
import type { JobInfo } from '../../../core/protocol/state.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { etaMs, progressShare, selectVisibleJobIds, shownIterations, visibleJobIds } from '../../../renderer/src/store/jobView.js';
import { createPanelStore } from '../../../renderer/src/store/panelStore.js';
import { OUTPUT_LIMIT_CHARS } from '../../../renderer/src/store/uiSlice.js';

const NOW = 1_700_000_000_000;

function loadedStore() {
  const store = createPanelStore({ metricsCapacity: 8 });
  store.getState().applyEvent({ type: 'snapshot', snapshot: demoSnapshot(NOW) });
  return store;
}

describe('panel store: service events', () => {
  it('takes everything from a snapshot', () => {
    const store = loadedStore();
    const state = store.getState();
    expect(state.jobs).toHaveLength(10);
    expect(state.jobsById.a3f9c2.name).toBe('resnet50-imagenet');
    expect(state.memory?.lanes.map((lane) => lane.id)).toEqual(['lane-0', 'lane-1']);
    expect(state.policy?.name).toBe('PACK');
    expect(state.gpu?.isSoftware).toBe(true);
    expect(state.snapshotAt).toBe(NOW);
  });

  it('keeps unchanged rows (and the table) identical when the service repeats itself', () => {
    const store = loadedStore();
    const before = store.getState().jobs;
    store.getState().applyEvent({ type: 'jobs', jobs: structuredClone(demoSnapshot(NOW).jobs) });
    expect(store.getState().jobs).toBe(before);

    const next = structuredClone(demoSnapshot(NOW).jobs);
    next[0].iterations.done += 1;
    store.getState().applyEvent({ type: 'jobs', jobs: next });
    const after = store.getState().jobs;
    expect(after).not.toBe(before);
    expect(after[0]).not.toBe(before[0]);
    expect(after[0].iterations.done).toBe(before[0].iterations.done + 1);
    expect(after[1]).toBe(before[1]);
  });

  it('drops jobs the service no longer lists', () => {
    const store = loadedStore();
    store.getState().applyEvent({ type: 'jobs', jobs: demoSnapshot(NOW).jobs.slice(0, 3) });
    expect(store.getState().jobs).toHaveLength(3);
    expect(store.getState().jobsById.c0ffee).toBeUndefined();
  });

  it('replaces the memory map and the policy whole', () => {
    const store = loadedStore();
    const memory = { ...demoSnapshot(NOW).memory, lanes: [] };
    store.getState().applyEvent({ type: 'memory', memory });
    expect(store.getState().memory).toBe(memory);
    const policy = { name: 'SRTF' as const, params: { maxLanes: 1 }, knobs: [] };
    store.getState().applyEvent({ type: 'policy', policy });
    expect(store.getState().policy).toBe(policy);
  });

  it('records metrics in the ring buffer and bumps the version and busy share', () => {
    const store = loadedStore();
    store.getState().applyEvent({ type: 'metrics', at: NOW, busyShare: 0.5, queueLength: 3, iterationsPerSecond: { a3f9c2: 5 } });
    const state = store.getState();
    expect(state.metricsVersion).toBe(1);
    expect(state.busyShare).toBe(0.5);
    expect(state.metrics.latest()).toEqual({ at: NOW, busyShare: 0.5, queueLength: 3 });
  });

  it('keeps output only for the job open in the drawer, after its loaded text', () => {
    const store = loadedStore();
    store.getState().applyEvent({ type: 'output', jobId: 'a3f9c2', stream: 'stdout', text: 'ignored\n' });
    expect(store.getState().output).toBeNull();

    store.getState().selectJob('a3f9c2');
    store.getState().setOutput('a3f9c2', { text: 'loaded\n' });
    store.getState().applyEvent({ type: 'output', jobId: 'a3f9c2', stream: 'stdout', text: 'live\n' });
    store.getState().applyEvent({ type: 'output', jobId: '5be017', stream: 'stderr', text: 'other job\n' });
    expect(store.getState().output).toEqual({ jobId: 'a3f9c2', text: 'loaded\nlive\n', loading: false, error: null });

    store.getState().setOutput('5be017', { text: 'late answer for a job no longer open' });
    expect(store.getState().output?.text).toBe('loaded\nlive\n');
  });

  it('caps the kept output, dropping the oldest text', () => {
    const store = loadedStore();
    store.getState().selectJob('a3f9c2');
    store.getState().setOutput('a3f9c2', { text: 'x'.repeat(OUTPUT_LIMIT_CHARS) });
    store.getState().appendOutput('a3f9c2', 'END');
    const text = store.getState().output?.text ?? '';
    expect(text).toHaveLength(OUTPUT_LIMIT_CHARS);
    expect(text.endsWith('END')).toBe(true);
  });
});

describe('panel store: sorting and filtering', () => {
  const names = (ids: string[], jobs: Record<string, JobInfo>) => ids.map((id) => jobs[id].name);

  it('sorts by state first by default, oldest first within a state', () => {
    const store = loadedStore();
    const ids = selectVisibleJobIds(store.getState());
    const states = ids.map((id) => store.getState().jobsById[id].state);
    expect(states).toEqual(['running', 'running', 'running', 'running', 'running', 'paused', 'queued', 'failed', 'done', 'killed']);
    expect(names(ids.slice(0, 2), store.getState().jobsById)).toEqual(['resnet50-imagenet', 'bert-base-squad']);
  });

  it('flips direction on the same key and puts unknown values last either way', () => {
    const store = loadedStore();
    store.getState().setSort('eta');
    const ascending = selectVisibleJobIds(store.getState());
    store.getState().setSort('eta');
    expect(store.getState().sort).toEqual({ key: 'eta', descending: true });
    const descending = selectVisibleJobIds(store.getState());
    const jobs = store.getState().jobsById;
    const known = (ids: string[]) => ids.filter((id) => etaMs(jobs[id]) !== null);
    expect(known(ascending)).toEqual([...known(descending)].reverse());
    // Both directions end with the jobs that have no ETA.
    expect(ascending.slice(known(ascending).length).every((id) => etaMs(jobs[id]) === null)).toBe(true);
    expect(descending.slice(known(descending).length).every((id) => etaMs(jobs[id]) === null)).toBe(true);
  });

  it('sorts by priority, highest first when descending', () => {
    const store = loadedStore();
    store.getState().setSort('priority');
    store.getState().setSort('priority');
    const ids = selectVisibleJobIds(store.getState());
    expect(names(ids.slice(0, 3), store.getState().jobsById)).toEqual(['gpt2-small-serve', 'resnet50-imagenet', 'bert-base-squad']);
  });

  it('filters by state group and by text in the name or id', () => {
    const store = loadedStore();
    const { jobs } = store.getState();
    expect(visibleJobIds(jobs, store.getState().sort, { text: '', state: 'finished' })).toHaveLength(3);
    expect(visibleJobIds(jobs, store.getState().sort, { text: '', state: 'active' })).toHaveLength(7);
    expect(visibleJobIds(jobs, store.getState().sort, { text: 'RESNET', state: 'all' })).toEqual(['a3f9c2', '8e15f4']);
    expect(visibleJobIds(jobs, store.getState().sort, { text: 'c0ff', state: 'all' })).toEqual(['c0ffee']);
    expect(visibleJobIds(jobs, store.getState().sort, { text: 'resnet', state: 'failed' })).toEqual(['8e15f4']);
  });

  it('memoizes the visible ids until the table, sort or filter changes', () => {
    const store = loadedStore();
    const first = selectVisibleJobIds(store.getState());
    expect(selectVisibleJobIds(store.getState())).toBe(first);
    store.getState().setFilter({ text: 'bert' });
    expect(selectVisibleJobIds(store.getState())).toEqual(['5be017']);
  });

  it('computes the ETA as remaining iterations times the mean iteration time', () => {
    const job = demoSnapshot(NOW).jobs[0];
    expect(etaMs(job)).toBeCloseTo((10_000 - 4210) * 182.4);
    expect(etaMs({ ...job, iterations: { done: 5, total: null } })).toBeNull();
    expect(etaMs({ ...job, state: 'done' })).toBeNull();
  });

  it('never reads past 100%, nor a negative time left, for a job that ran more iterations than it declared', () => {
    const over = { ...demoSnapshot(NOW).jobs[0], iterations: { done: 44, total: 40 } };
    expect(shownIterations(over)).toEqual({ done: 40, total: 40 });
    expect(progressShare(over)).toBe(1);
    expect(etaMs(over)).toBe(0);
  });
});

describe('panel store: launch sheet', () => {
  it('names the job after the chosen file unless the user typed a name', () => {
    const store = createPanelStore();
    store.getState().openLaunch({ file: new File(['x'], 'train-mnist.mjs') });
    expect(store.getState().launch).toMatchObject({ open: true, draft: { name: 'train-mnist' } });
    store.getState().updateDraft({ file: new File(['x'], 'bert.js') });
    expect(store.getState().launch.draft.name).toBe('bert');
    store.getState().updateDraft({ name: 'my run' });
    store.getState().updateDraft({ file: new File(['x'], 'other.mjs') });
    expect(store.getState().launch.draft.name).toBe('my run');
    store.getState().closeLaunch();
    expect(store.getState().launch.open).toBe(false);
  });
});
