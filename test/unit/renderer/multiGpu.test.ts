// @vitest-environment happy-dom
// The panel on a service with two GPUs: a memory-map row per GPU, and a GPU column in the queue (neither with one GPU).
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { cleanup, screen, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GpuMemoryMap, ServiceSnapshot } from '../../../core/protocol/state.js';
import { MemoryMap } from '../../../renderer/src/components/MemoryMap.js';
import { JobQueue } from '../../../renderer/src/components/JobQueue.js';
import { demoSnapshot } from '../../../renderer/src/dev/demoSnapshot.js';
import { giveElementsHeight, renderPanel } from './fakeApi.js';

afterEach(cleanup);
let restoreHeight: () => void;
beforeAll(() => { restoreHeight = giveElementsHeight(600); });
afterAll(() => restoreHeight());

/** The demo snapshot split over two GPUs: its first admitted job's lane on gpu1, the rest on gpu0. */
function twoGpus(): ServiceSnapshot {
  const snapshot = demoSnapshot(1_700_000_000_000);
  const { memory } = snapshot;
  const movedLane = memory.lanes[0].id;
  const onGpu1 = (lane: string | null | undefined) => lane === movedLane;
  const part = (id: string, name: string, lanes: typeof memory.lanes, jobs: typeof memory.jobs): GpuMemoryMap => {
    const usedBytes = jobs.reduce((sum, job) => sum + job.persistentBytes, 0) + lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
    return { id, name, capacityBytes: memory.capacityBytes, usedBytes, freeBytes: memory.capacityBytes - usedBytes, capacitySource: '--memory', jobs, lanes };
  };
  const gpu1Jobs = snapshot.jobs.filter((job) => onGpu1(job.lane)).map((job) => job.id);
  const gpus = [
    part('gpu0', 'NVIDIA A100', memory.lanes.filter((lane) => !onGpu1(lane.id)), memory.jobs.filter((job) => !gpu1Jobs.includes(job.id))),
    part('gpu1', 'NVIDIA H100', memory.lanes.filter((lane) => onGpu1(lane.id)), memory.jobs.filter((job) => gpu1Jobs.includes(job.id))),
  ];
  const jobs = snapshot.jobs.map((job) => ({ ...job, gpu: job.lane === null ? null : onGpu1(job.lane) ? 'gpu1' : 'gpu0' }));
  return { ...snapshot, jobs, memory: { ...memory, capacityBytes: 2 * memory.capacityBytes, gpus }, busyShareByGpu: { gpu0: 0.25, gpu1: 1 } };
}

describe('the panel with two GPUs', () => {
  it('draws one memory bar per GPU, each named and holding only its own jobs and lanes', () => {
    const snapshot = twoGpus();
    renderPanel(createElement(MemoryMap), { snapshot });
    const rows = within(screen.getByRole('list', { name: 'GPUs' })).getAllByRole('listitem').filter((item) => item.classList.contains('gpu-row'));
    expect(rows.map((row) => row.dataset.gpu)).toEqual(['gpu0', 'gpu1']);
    expect(rows[1]).toHaveTextContent('NVIDIA H100');
    expect(rows.map((row) => /busy (\d+(?:\.\d+)?%)/.exec(row.querySelector('.gpu-use')?.textContent ?? '')?.[1])).toEqual(['25%', '100%']);
    for (const gpu of snapshot.memory.gpus!) {
      const bar = screen.getByRole('list', { name: new RegExp(`^Memory map of ${gpu.id}:`) });
      expect(Number(bar.dataset.capacityBytes)).toBe(gpu.capacityBytes);
      const items = within(bar).getAllByRole('listitem');
      expect(items.filter((item) => item.dataset.kind === 'lane').map((item) => item.dataset.key)).toEqual(gpu.lanes.map((lane) => `lane:${lane.id}`));
      expect(items.filter((item) => item.dataset.kind === 'persistent')).toHaveLength(gpu.jobs.length);
    }
    expect(screen.getByRole('heading', { name: 'GPU memory · 2 GPUs' })).toBeInTheDocument();
  });

  it('shows each job\'s GPU in the queue, and no GPU column with one GPU', () => {
    const snapshot = twoGpus();
    renderPanel(createElement(JobQueue), { snapshot });
    expect(screen.getByRole('columnheader', { name: 'GPU' })).toBeInTheDocument();
    const queued = snapshot.jobs.find((job) => job.gpu === null)!;
    const onGpu1 = snapshot.jobs.find((job) => job.gpu === 'gpu1')!;
    const rowOf = (name: string) => screen.getByRole('button', { name: `Details of ${name}` }).closest('[role="row"]') as HTMLElement;
    expect(within(rowOf(onGpu1.name)).getAllByRole('cell').map((cell) => cell.textContent)).toContain('gpu1');
    expect(within(rowOf(queued.name)).getAllByRole('cell').some((cell) => cell.classList.contains('col-gpu') && cell.textContent === '—')).toBe(true);
    cleanup();
    renderPanel(createElement(JobQueue));
    expect(screen.queryByRole('columnheader', { name: 'GPU' })).toBeNull();
  });
});
