import { afterEach, describe, expect, test } from 'vitest';
import { paddedLaneBytes, paddedPersistentBytes, planAdmission, type AdmissionInput } from '../../../core/memory/admission.js';
import { createMemoryManager, type MemoryManager } from '../../../core/memory/memoryManager.js';
import { GiB, MiB, STORAGE_COPY, fakeAllocator } from './helpers.js';

const base: AdmissionInput = {
  capacityBytes: 4 * GiB,
  capacitySource: '--memory',
  committedBytes: 0,
  lanes: [],
  maxLanes: 4,
  persistentBytes: 0,
  ephemeralBytes: 0,
};

describe('planAdmission (pure)', () => {
  test('padding is exact integer arithmetic', () => {
    expect(paddedPersistentBytes(5 * GiB)).toBe(5.5 * GiB);
    expect(paddedPersistentBytes(7)).toBe(8);
    expect(paddedLaneBytes(20 * MiB)).toBe(21 * MiB);
  });

  test('a job that fits gets a new lane padded by 5%', () => {
    expect(planAdmission({ ...base, persistentBytes: GiB, ephemeralBytes: 1000 * MiB })).toEqual({ kind: 'new-lane', laneSizeBytes: 1050 * MiB, resizes: [] });
  });

  test('the padding is dropped when only the bare ephemeral size fits', () => {
    const plan = planAdmission({ ...base, persistentBytes: 0, ephemeralBytes: 4 * GiB - MiB });
    expect(plan).toEqual({ kind: 'new-lane', laneSizeBytes: 4 * GiB - MiB, resizes: [] });
  });

  test('too big for an empty GPU is refused, naming the sizes', () => {
    const plan = planAdmission({ ...base, persistentBytes: 5 * GiB, ephemeralBytes: GiB });
    expect(plan.kind).toBe('refused');
    expect(plan.kind === 'refused' && plan.reason).toBe(
      'job needs 6.50 GiB (5.50 GiB persistent, the declared 5 GiB + 10%, + 1 GiB ephemeral) but the GPU has 4 GiB (--memory), ' +
        'so it can never fit; lower the batch size or pass a larger --memory',
    );
  });

  test('with lanes at their maximum, the job joins the lane needing least growth, ties to the smallest', () => {
    const lanes = [
      { id: 'lane-1', sizeBytes: 2 * GiB, minSizeBytes: 2 * GiB },
      { id: 'lane-2', sizeBytes: GiB, minSizeBytes: GiB },
      { id: 'lane-3', sizeBytes: 512 * MiB, minSizeBytes: 512 * MiB },
    ];
    const input = { ...base, lanes, maxLanes: 3, committedBytes: 3.5 * GiB };
    expect(planAdmission({ ...input, ephemeralBytes: 256 * MiB })).toEqual({ kind: 'join', laneId: 'lane-3', resizes: [] });
    // 768 MiB: lane-1 and lane-2 need no growth; lane-2 is smaller.
    expect(planAdmission({ ...input, ephemeralBytes: 768 * MiB })).toEqual({ kind: 'join', laneId: 'lane-2', resizes: [] });
    // 2.5 GiB: every lane must grow; lane-1 grows least (by 0.5 GiB, of the 2 GiB unreserved).
    expect(planAdmission({ ...input, committedBytes: 2 * GiB, ephemeralBytes: 2.5 * GiB })).toEqual({
      kind: 'join',
      laneId: 'lane-1',
      resizes: [{ laneId: 'lane-1', sizeBytes: 2.5 * GiB }],
    });
  });

  test('a join that must grow the lane says so in its resizes', () => {
    const lanes = [{ id: 'lane-1', sizeBytes: GiB, minSizeBytes: GiB }];
    const plan = planAdmission({ ...base, lanes, maxLanes: 1, committedBytes: GiB, ephemeralBytes: 2 * GiB });
    expect(plan).toEqual({ kind: 'join', laneId: 'lane-1', resizes: [{ laneId: 'lane-1', sizeBytes: 2 * GiB }] });
  });

  test('shrinking lanes with slack lets a job in, most slack first and only as far as needed', () => {
    const lanes = [
      { id: 'lane-1', sizeBytes: 2048 * MiB, minSizeBytes: 1024 * MiB },
      { id: 'lane-2', sizeBytes: 1536 * MiB, minSizeBytes: 256 * MiB },
    ];
    const input = { ...base, lanes, committedBytes: 4 * GiB, persistentBytes: 500 * MiB, ephemeralBytes: 1024 * MiB };
    // A new lane needs 550 + 1024 MiB: lane-2 gives all its 1280 MiB of slack, lane-1 the other 294 MiB.
    expect(planAdmission(input)).toEqual({
      kind: 'new-lane',
      laneSizeBytes: 1024 * MiB,
      resizes: [
        { laneId: 'lane-2', sizeBytes: 256 * MiB },
        { laneId: 'lane-1', sizeBytes: 1754 * MiB },
      ],
    });
    // No lane left to create: join the smaller lane (no growth needed), which keeps 1 GiB for the new job,
    // so lane-1 gives the 550 MiB.
    expect(planAdmission({ ...input, maxLanes: 2 })).toEqual({ kind: 'join', laneId: 'lane-2', resizes: [{ laneId: 'lane-1', sizeBytes: 1498 * MiB }] });
  });

  test('when nothing works the job waits, naming the missing bytes', () => {
    const lanes = [{ id: 'lane-1', sizeBytes: 2 * GiB, minSizeBytes: 1.75 * GiB }];
    const plan = planAdmission({ ...base, lanes, committedBytes: 3.5 * GiB, ephemeralBytes: 3 * GiB });
    // New lane: 3 GiB needed, 0.5 GiB unreserved + 0.25 GiB slack. Joining: grow by 1 GiB, 0.5 GiB unreserved -> 512 MiB short.
    expect(plan).toEqual({
      kind: 'wait',
      missingBytes: 512 * MiB,
      reason:
        'waiting for GPU memory: job needs 3 GiB (0 B persistent, the declared 0 B + 10%, + 3 GiB ephemeral); ' +
        '512 MiB (536870912 bytes) more must be freed first (512 MiB of 4 GiB unreserved)',
    });
  });

  test('maxLanes below 1 counts as 1', () => {
    expect(planAdmission({ ...base, maxLanes: 0 }).kind).toBe('new-lane');
    const lanes = [{ id: 'lane-1', sizeBytes: 0, minSizeBytes: 0 }];
    expect(planAdmission({ ...base, lanes, maxLanes: 0 })).toEqual({ kind: 'join', laneId: 'lane-1', resizes: [] });
  });

});

describe('MemoryManager.admit', () => {
  let manager: MemoryManager;
  const make = (capacityBytes = 4 * GiB) => (manager = createMemoryManager({ capacityBytes, capacitySource: '--memory', allocator: fakeAllocator() }));

  afterEach(() => {
    for (const job of manager.snapshot().jobs) manager.release(job.id);
    expect(manager.liveBuffers()).toEqual({ count: 0, bytes: 0 });
    expect(manager.snapshot().usedBytes).toBe(0);
    expect(manager.snapshot().lanes).toEqual([]);
  });

  test('a job that fits gets its own lane; the map reserves its padded share', () => {
    make();
    expect(manager.admit({ jobId: 'a', persistentBytes: 1000 * MiB, ephemeralBytes: 1000 * MiB }, { maxLanes: 4 })).toEqual({ kind: 'admitted', laneId: 'lane-1' });
    expect(manager.admit({ jobId: 'b', persistentBytes: 100 * MiB, ephemeralBytes: 100 * MiB }, { maxLanes: 4 })).toEqual({ kind: 'admitted', laneId: 'lane-2' });
    const map = manager.snapshot();
    expect(map.lanes.map((lane) => [lane.id, lane.sizeBytes, lane.jobs])).toEqual([
      ['lane-1', 1050 * MiB, ['a']],
      ['lane-2', 105 * MiB, ['b']],
    ]);
    expect(map.committedBytes).toBe((1100 + 1050 + 110 + 105) * MiB);
    // Nothing allocated yet: used counts lanes and actual persistent bytes only.
    expect(map.usedBytes).toBe((1050 + 105) * MiB);
    expect(map.freeBytes).toBe(4 * GiB - map.usedBytes);
    expect(manager.laneOf('b')).toBe('lane-2');
  });

  test('with maxLanes=1 the second job joins the first lane, which grows to its E', () => {
    make();
    manager.admit({ jobId: 'a', persistentBytes: 0, ephemeralBytes: GiB }, { maxLanes: 1 });
    expect(manager.admit({ jobId: 'b', persistentBytes: 0, ephemeralBytes: 2 * GiB }, { maxLanes: 1 })).toEqual({ kind: 'admitted', laneId: 'lane-1' });
    expect(manager.snapshot().lanes).toEqual([{ id: 'lane-1', sizeBytes: 2 * GiB, pooledBytes: 0, jobs: ['a', 'b'], running: null }]);
  });

  test('Σ P + max E packs where Σ P + Σ E would not', () => {
    make();
    for (const jobId of ['a', 'b', 'c']) {
      expect(manager.admit({ jobId, persistentBytes: 500 * MiB, ephemeralBytes: 2000 * MiB }, { maxLanes: 1 }).kind).toBe('admitted');
    }
    expect(manager.snapshot().committedBytes).toBe((3 * 550 + 2100) * MiB);
    expect(manager.snapshot().lanes).toHaveLength(1);
  });

  test('too big for the whole GPU is refused with a message naming the sizes', () => {
    make();
    const result = manager.admit({ jobId: 'huge', persistentBytes: 5 * GiB, ephemeralBytes: GiB }, { maxLanes: 4 });
    expect(result.kind).toBe('refused');
    expect(result.kind === 'refused' && result.reason).toMatch(/needs 6\.50 GiB .* but the GPU has 4 GiB \(--memory\), so it can never fit; lower the batch size/);
    expect(manager.laneOf('huge')).toBeNull();
  });

  test('bad hints are refused, not thrown', () => {
    make();
    expect(manager.admit({ jobId: 'x', persistentBytes: -1 }, { maxLanes: 1 })).toEqual({
      kind: 'refused',
      reason: 'invalid memory hint persistentBytes=-1: expected a whole number of bytes, 0 or more',
    });
    expect(manager.admit({ jobId: 'y', ephemeralBytes: Number.NaN }, { maxLanes: 1 }).kind).toBe('refused');
    expect(manager.admit({ jobId: '' }, { maxLanes: 1 }).kind).toBe('refused');
  });

  test('a job waits while others hold the room, and fits after one is released', () => {
    make();
    manager.admit({ jobId: 'a', persistentBytes: GiB, ephemeralBytes: GiB }, { maxLanes: 2 });
    manager.admit({ jobId: 'b', persistentBytes: 0, ephemeralBytes: 1.5 * GiB }, { maxLanes: 2 });
    const waiting = manager.admit({ jobId: 'c', persistentBytes: GiB, ephemeralBytes: GiB }, { maxLanes: 2 });
    expect(waiting.kind).toBe('wait');
    expect(waiting.kind === 'wait' && waiting.reason).toMatch(/^waiting for GPU memory: .*\(\d+ bytes\) more must be freed first/);
    expect(manager.laneOf('c')).toBeNull();
    const before = manager.version;
    manager.release('b');
    expect(manager.version).toBeGreaterThan(before);
    expect(manager.snapshot().lanes.map((lane) => lane.id)).toEqual(['lane-1']);
    // lane-2 is gone; lane-1 already has room for c's ephemeral memory, a new lane would not fit.
    expect(manager.admit({ jobId: 'c', persistentBytes: GiB, ephemeralBytes: GiB }, { maxLanes: 2 })).toEqual({ kind: 'admitted', laneId: 'lane-1' });
  });

  test('a lane shrinks to what its jobs measured when that lets a waiting job in', () => {
    make();
    // Declares 3000 MiB of ephemeral memory, so its lane is 3150 MiB of the 4096.
    manager.admit({ jobId: 'a', persistentBytes: 0, ephemeralBytes: 3000 * MiB }, { maxLanes: 2 });
    const b = { jobId: 'b', persistentBytes: 1000 * MiB, ephemeralBytes: 500 * MiB };
    const waiting = manager.admit(b, { maxLanes: 2 });
    // Joining lane-1 needs 1100 MiB, 946 MiB are unreserved and the lane can give 150 MiB of padding.
    expect(waiting.kind === 'wait' && waiting.reason).toMatch(/; 4 MiB \(4194304 bytes\) more must be freed first/);

    // Its iterations turn out to use 256 KiB.
    manager.beginIteration('a');
    const scratch = manager.allocate('a', { size: 256 * 1024, usage: STORAGE_COPY });
    expect(scratch.ok).toBe(true);
    if (scratch.ok) manager.free(scratch.lease);
    manager.endIteration('a');
    expect(manager.usage('a').ephemeralPeakBytes).toBe(256 * 1024);
    expect(manager.snapshot().lanes[0]).toMatchObject({ sizeBytes: 3150 * MiB, pooledBytes: 256 * 1024 });

    expect(manager.admit(b, { maxLanes: 2 })).toEqual({ kind: 'admitted', laneId: 'lane-2' });
    const [laneA, laneB] = manager.snapshot().lanes;
    expect(laneB.sizeBytes).toBe(500 * MiB);
    expect(laneA.sizeBytes).toBe((3150 - 654) * MiB); // shrunk by exactly the 654 MiB b was missing
    expect(laneA.pooledBytes).toBe(256 * 1024); // the idle buffer still fits, so it stays
    expect(manager.snapshot().committedBytes).toBe(4 * GiB);
  });

  test('jobs without hints are admitted into a new lane, then the smallest, and grow it on demand', () => {
    make();
    manager.admit({ jobId: 'big', persistentBytes: 0, ephemeralBytes: GiB }, { maxLanes: 3 });
    manager.admit({ jobId: 'small', persistentBytes: 0, ephemeralBytes: 10 * MiB }, { maxLanes: 3 });
    expect(manager.admit({ jobId: 'free1' }, { maxLanes: 3 })).toEqual({ kind: 'admitted', laneId: 'lane-3' });
    expect(manager.admit({ jobId: 'free2' }, { maxLanes: 3 })).toEqual({ kind: 'admitted', laneId: 'lane-3' });
    expect(manager.snapshot().lanes[2].sizeBytes).toBe(0);
    manager.beginIteration('free2');
    const scratch = manager.allocate('free2', { size: MiB, usage: STORAGE_COPY });
    expect(scratch.ok).toBe(true);
    if (scratch.ok) manager.free(scratch.lease);
    manager.endIteration('free2');
    expect(manager.snapshot().lanes[2].sizeBytes).toBe(MiB);
    // A buffer that outlives its iteration is state: it leaves the lane, and so does the room the lane grew for it.
    manager.beginIteration('free2');
    expect(manager.allocate('free2', { size: 2 * MiB, usage: STORAGE_COPY }).ok).toBe(true);
    expect(manager.snapshot().lanes[2].sizeBytes).toBe(2 * MiB);
    manager.endIteration('free2');
    expect(manager.snapshot().lanes[2].sizeBytes).toBe(MiB);
    expect(manager.usage('free2').persistentBytes).toBe(2 * MiB);
  });

  test('admitting an admitted job answers its lane and changes nothing', () => {
    make();
    manager.admit({ jobId: 'a', ephemeralBytes: MiB }, { maxLanes: 2 });
    const version = manager.version;
    expect(manager.admit({ jobId: 'a', ephemeralBytes: GiB }, { maxLanes: 2 })).toEqual({ kind: 'admitted', laneId: 'lane-1' });
    expect(manager.version).toBe(version);
    expect(manager.snapshot().lanes).toHaveLength(1);
  });
});
