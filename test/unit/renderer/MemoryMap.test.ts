// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { act, cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryMap } from '../../../renderer/src/components/MemoryMap.js';
import { axisTicks } from '../../../renderer/src/components/memoryLayout.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { renderPanel } from './fakeApi.js';

afterEach(cleanup);

const segments = (kind?: string) =>
  within(screen.getByRole('list', { name: /^Memory map/ })).getAllByRole('listitem').filter((item) => !kind || item.dataset.kind === kind);
const bytes = (items: HTMLElement[]) => items.reduce((sum, item) => sum + Number(item.dataset.bytes), 0);

describe('MemoryMap', () => {
  it('splits the capacity into per-job persistent memory, lanes and free space, exactly as the ledger has it', () => {
    const snapshot = demoSnapshot(1);
    renderPanel(createElement(MemoryMap), { snapshot });
    const { memory } = snapshot;

    expect(segments('persistent')).toHaveLength(memory.jobs.length);
    expect(bytes(segments('persistent'))).toBe(memory.jobs.reduce((sum, job) => sum + job.persistentBytes, 0));
    expect(segments('lane').map((item) => Number(item.dataset.bytes))).toEqual(memory.lanes.map((lane) => lane.sizeBytes));
    expect(bytes(segments('free'))).toBe(memory.freeBytes);
    expect(bytes(segments('persistent')) + bytes(segments('lane'))).toBe(memory.usedBytes);
    expect(bytes(segments())).toBe(memory.capacityBytes);

    // Widths are shares of the capacity and add up to the whole bar.
    const widths = segments().map((item) => parseFloat(item.style.width));
    expect(widths.reduce((a, b) => a + b, 0)).toBeCloseTo(100, 6);
    expect(widths[0]).toBeCloseTo((memory.jobs[0].persistentBytes / memory.capacityBytes) * 100, 6);
  });

  it('says how much of the persistent memory is textures, when jobs hold any', () => {
    const snapshot = demoSnapshot(1);
    renderPanel(createElement(MemoryMap), { snapshot });
    expect(screen.queryByText('Textures')).toBeNull();
    cleanup();
    const withTextures = { ...snapshot, memory: { ...snapshot.memory, jobs: snapshot.memory.jobs.map((job, i) => ({ ...job, textureBytes: i === 0 ? 3 * 1024 * 1024 : 0 })) } };
    renderPanel(createElement(MemoryMap), { snapshot: withTextures });
    expect(screen.getByText('Textures').nextElementSibling).toHaveTextContent('3.00 MiB');
  });

  it('counts the compiled pipelines the service keeps for later jobs, once it keeps any', () => {
    const snapshot = demoSnapshot(1);
    renderPanel(createElement(MemoryMap), { snapshot: { ...snapshot, memory: { ...snapshot.memory, keptPipelines: { count: 0, reused: 0 } } } });
    expect(screen.queryByText('Pipelines kept')).toBeNull();
    cleanup();
    renderPanel(createElement(MemoryMap), { snapshot: { ...snapshot, memory: { ...snapshot.memory, keptPipelines: { count: 43, reused: 86 } } } });
    const term = screen.getByText('Pipelines kept');
    expect(term.nextElementSibling).toHaveTextContent('43');
    expect(term.parentElement).toHaveAttribute('title', expect.stringContaining('86 handed out so far'));
    // Host memory, not the GPU's: the bar still adds up to the capacity.
    expect(bytes(segments())).toBe(snapshot.memory.capacityBytes);
  });

  it('names each segment with its exact bytes, and shows them on hover', async () => {
    const user = userEvent.setup();
    renderPanel(createElement(MemoryMap));
    const resnet = screen.getByRole('listitem', { name: /^resnet50-imagenet: persistent memory/ });
    expect(resnet).toHaveAccessibleName(/1\.60 GiB \(1,717,986,918 bytes\)/);
    const lane = screen.getByRole('listitem', { name: /^lane-1: reserved/ });
    expect(lane).toHaveAccessibleName(/pooled 3\.90 GiB; running bert-base-squad/);

    await user.hover(lane);
    const tooltip = screen.getByRole('tooltip');
    expect(tooltip).toHaveTextContent('lane-1 · lane');
    expect(tooltip).toHaveTextContent('4,187,593,114 bytes');
    expect(tooltip).toHaveTextContent('running bert-base-squad');
    await user.unhover(screen.getByRole('list', { name: /^Memory map/ }));
    expect(screen.queryByRole('tooltip')).toBeNull();
  });

  it('shows the same numbers to the keyboard: focus a segment for its tooltip', async () => {
    const user = userEvent.setup();
    renderPanel(createElement(MemoryMap));
    await user.tab();
    expect(screen.getByRole('tooltip')).toHaveTextContent('resnet50-imagenet · persistent');
  });

  it('lists each lane with its size, pooled bytes, jobs and who iterates now', () => {
    renderPanel(createElement(MemoryMap));
    const cards = within(screen.getByRole('list', { name: 'Lanes' })).getAllByRole('listitem');
    expect(cards).toHaveLength(2);
    expect(cards[0]).toHaveTextContent('lane-0');
    expect(cards[0]).toHaveTextContent('3.20 GiB');
    expect(cards[0]).toHaveTextContent('pooled 2.75 GiB · 3 jobs');
    expect(cards[0]).toHaveTextContent('running resnet50-imagenet');
  });

  it('follows the ledger: a killed job’s segment leaves and free space grows by its bytes', () => {
    const { store } = renderPanel(createElement(MemoryMap));
    const before = store.getState().memory!;
    const gone = before.jobs.find((job) => job.id === '0c44d8')!;
    const after = {
      ...before,
      jobs: before.jobs.filter((job) => job.id !== gone.id),
      usedBytes: before.usedBytes - gone.persistentBytes,
      freeBytes: before.freeBytes + gone.persistentBytes,
    };
    act(() => store.getState().applyEvent({ type: 'memory', memory: after }));
    expect(segments('persistent')).toHaveLength(before.jobs.length - 1);
    expect(bytes(segments('free'))).toBe(before.freeBytes + gone.persistentBytes);
    expect(bytes(segments())).toBe(before.capacityBytes);
  });

  it('waits politely for the first memory map', () => {
    const snapshot = demoSnapshot(1);
    const { store } = renderPanel(createElement(MemoryMap), { snapshot });
    act(() => store.setState({ memory: null }));
    expect(screen.getByText(/Waiting for the service/)).toBeInTheDocument();
  });
});

describe('axisTicks', () => {
  it('picks round steps from zero to the capacity', () => {
    const GiB = 2 ** 30;
    expect(axisTicks(16 * GiB)).toEqual([0, 2, 4, 6, 8, 10, 12, 14, 16].map((n) => n * GiB));
    expect(axisTicks(24 * GiB)).toEqual([0, 4, 8, 12, 16, 20, 24].map((n) => n * GiB));
    expect(axisTicks(0)).toEqual([0]);
  });
});
