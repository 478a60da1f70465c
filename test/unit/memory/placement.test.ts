// Placement over several GPUs (core/memory/placement.ts), on real memory managers whose buffers are stand-ins:
// where a job goes, when it waits, when it is refused, and the arrival-order loop the service and the simulator share.
import { describe, expect, it } from 'vitest';
import { createMemoryManager } from '../../../core/memory/memoryManager.js';
import { admitInArrivalOrder, committedLoad, placeJob, type PlacementTarget } from '../../../core/memory/placement.js';
import { fakeAllocator, MiB } from './helpers.js';

function gpu(id: string, capacityBytes: number, maxLanes = 1): PlacementTarget & { memory: ReturnType<typeof createMemoryManager> } {
  const memory = createMemoryManager({ capacityBytes, capacitySource: 'test', allocator: fakeAllocator(), laneIdPrefix: `${id}/` });
  return { id, memory, maxLanes: () => maxLanes, load: () => committedLoad(memory) };
}

describe('placeJob', () => {
  it('puts two 40 MiB jobs on two 64 MiB GPUs, one on each', () => {
    const gpus = [gpu('gpu0', 64 * MiB), gpu('gpu1', 64 * MiB)];
    const a = placeJob({ jobId: 'a', persistentBytes: 40 * MiB, ephemeralBytes: 4 * MiB }, gpus);
    const b = placeJob({ jobId: 'b', persistentBytes: 40 * MiB, ephemeralBytes: 4 * MiB }, gpus);
    expect(a).toEqual({ kind: 'admitted', gpuId: 'gpu0', laneId: 'gpu0/lane-1' });
    expect(b).toEqual({ kind: 'admitted', gpuId: 'gpu1', laneId: 'gpu1/lane-1' });
    // A third fits on neither now, but would on either once a job leaves: it waits.
    const c = placeJob({ jobId: 'c', persistentBytes: 40 * MiB, ephemeralBytes: 4 * MiB }, gpus);
    expect(c.kind).toBe('wait');
    expect(c.kind === 'wait' && c.reason).toMatch(/^no room on every GPU now \(gpu0: /);
    gpus[1].memory.release('b');
    expect(placeJob({ jobId: 'c', persistentBytes: 40 * MiB, ephemeralBytes: 4 * MiB }, gpus)).toMatchObject({ kind: 'admitted', gpuId: 'gpu1' });
  });

  it('prefers the less loaded GPU among those where the job fits, the earlier one on a tie', () => {
    const gpus = [gpu('gpu0', 64 * MiB), gpu('gpu1', 64 * MiB)];
    expect(placeJob({ jobId: 'a', persistentBytes: 1 * MiB }, gpus)).toMatchObject({ gpuId: 'gpu0' });
    expect(placeJob({ jobId: 'b', persistentBytes: 30 * MiB }, gpus)).toMatchObject({ gpuId: 'gpu1' });
    // One job each; gpu0 has less committed, so it comes first.
    expect(placeJob({ jobId: 'c', persistentBytes: 1 * MiB }, gpus)).toMatchObject({ gpuId: 'gpu0' });
    // gpu0 now has two jobs: the next goes to gpu1, as long as it fits there.
    expect(placeJob({ jobId: 'd', persistentBytes: 1 * MiB }, gpus)).toMatchObject({ gpuId: 'gpu1' });
  });

  it('puts a job whose state an earlier run measured where that much is free, though another GPU has fewer jobs', () => {
    const gpus = [gpu('gpu0', 64 * MiB), gpu('gpu1', 64 * MiB)];
    placeJob({ jobId: 'big', persistentBytes: 40 * MiB }, [gpus[0]]);
    placeJob({ jobId: 's1', persistentBytes: 1 * MiB }, [gpus[1]]);
    placeJob({ jobId: 's2', persistentBytes: 1 * MiB }, [gpus[1]]);
    // By load alone gpu0 (one job) comes first, with 24 MiB free.
    expect(placeJob({ jobId: 'x', ephemeralBytes: MiB }, gpus)).toMatchObject({ gpuId: 'gpu0' });
    expect(placeJob({ jobId: 'y', ephemeralBytes: MiB, expectedPersistentBytes: 40 * MiB }, gpus)).toMatchObject({ gpuId: 'gpu1' });
  });

  it('keeps a pinned job to its GPU: it waits there though another has room', () => {
    const gpus = [gpu('gpu0', 64 * MiB), gpu('gpu1', 64 * MiB)];
    expect(placeJob({ jobId: 'a', persistentBytes: 40 * MiB, gpu: 'gpu1' }, gpus)).toMatchObject({ kind: 'admitted', gpuId: 'gpu1' });
    const pinned = placeJob({ jobId: 'b', persistentBytes: 40 * MiB, gpu: 'gpu1' }, gpus);
    expect(pinned).toMatchObject({ kind: 'wait' });
    expect(pinned.kind === 'wait' && pinned.reason).toMatch(/^no room on gpu1 now/);
    expect(gpus[0].memory.snapshot().jobs).toEqual([]);
  });

  it('refuses a job too big for every GPU, naming the largest; and a pin to a GPU that is not there', () => {
    const gpus = [gpu('gpu0', 32 * MiB), gpu('gpu1', 64 * MiB)];
    const big = placeJob({ jobId: 'big', persistentBytes: 100 * MiB }, gpus);
    expect(big.kind).toBe('refused');
    expect(big.kind === 'refused' && big.reason).toMatch(/\(on the largest GPU, gpu1, of 64 MiB\)$/);
    expect(placeJob({ jobId: 'x', persistentBytes: 1, gpu: 'gpu7' }, gpus))
      .toEqual({ kind: 'refused', reason: "no GPU 'gpu7' here; the GPUs are gpu0, gpu1" });
    // Too big for its pinned GPU, though another could hold it: refused, naming that GPU.
    const pinned = placeJob({ jobId: 'p', persistentBytes: 48 * MiB, gpu: 'gpu0' }, gpus);
    expect(pinned.kind === 'refused' && pinned.reason).toMatch(/\(on its GPU, gpu0, of 32 MiB\)$/);
  });

  it('answers in the memory manager\'s own words on a single GPU', () => {
    const one = gpu('gpu0', 64 * MiB);
    const direct = createMemoryManager({ capacityBytes: 64 * MiB, capacitySource: 'test', allocator: fakeAllocator() });
    const request = { jobId: 'big', persistentBytes: 100 * MiB };
    expect(placeJob(request, [one])).toEqual(direct.admit(request, { maxLanes: 1 }));
  });
});

describe('admitInArrivalOrder', () => {
  it('lets a small job pass a big one that waits, and takes out of the line those that left', () => {
    const gpus = [gpu('gpu0', 64 * MiB)];
    placeJob({ jobId: 'resident', persistentBytes: 40 * MiB }, gpus);
    const line = [{ jobId: 'big', persistentBytes: 40 * MiB }, { jobId: 'small', persistentBytes: 8 * MiB }, { jobId: 'huge', persistentBytes: 128 * MiB }];
    const waits: string[] = [];
    const steps = admitInArrivalOrder(line, (request) => placeJob(request, gpus), (request) => waits.push(request.jobId));
    expect(steps.map((step) => [step.item.jobId, step.result.kind])).toEqual([['small', 'admitted'], ['huge', 'refused']]);
    expect(line.map((request) => request.jobId)).toEqual(['big']);
    expect(waits).toEqual(['big']);
  });
});
