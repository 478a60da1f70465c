// The admission queue (core/service/admissionQueue.ts) over a stand-in for the
// memory manager's admit: arrival order, small jobs passing big ones, the
// device requests each waiting job is owed, and what earlier runs measured.
import { describe, expect, it } from 'vitest';
import { AdmissionQueue } from '../../../core/service/admissionQueue.js';
import { JobTable } from '../../../core/service/jobTable.js';
import type { ServiceHistory } from '../../../core/service/serviceHistory.js';
import type { AdmissionResult, JobMemoryRequest } from '../../../core/memory/types.js';
import { PROTOCOL_VERSION, type Hello } from '../../../core/protocol/messages.js';

/** A memory of `freeBytes`: a job fits when its declared bytes do; past the capacity it is refused. */
function fakeMemory(capacityBytes: number) {
  const asked: JobMemoryRequest[] = [];
  let freeBytes = capacityBytes;
  return {
    asked,
    capacityBytes,
    setFree(bytes: number) { freeBytes = bytes; },
    admit(request: JobMemoryRequest): AdmissionResult {
      asked.push(request);
      const need = (request.persistentBytes ?? 0) + (request.ephemeralBytes ?? 0);
      if (need > capacityBytes) return { kind: 'refused', reason: `needs ${need}, more than the GPU has` };
      if (need > freeBytes) return { kind: 'wait', reason: `waits for ${need - freeBytes} bytes` };
      freeBytes -= need;
      return { kind: 'admitted', laneId: 'lane-1' };
    },
  };
}

const table = new JobTable();
const hello = (hints: Hello['hints'], extra: Partial<Hello> = {}): Hello => ({ t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', hints, ...extra });

function queueOver(memory: ReturnType<typeof fakeMemory>, history: ServiceHistory | null = null) {
  const log: string[] = [];
  const target = { id: 'gpu0', memory, maxLanes: () => 1, load: () => 0 };
  const queue = new AdmissionQueue({ targets: () => [target], history: () => history, log: (line) => log.push(line) });
  return { queue, log };
}

describe('the admission queue', () => {
  it('admits in arrival order, and lets a small job pass a big one that still waits', () => {
    const memory = fakeMemory(100);
    memory.setFree(30);
    const { queue } = queueOver(memory);
    const big = table.open(hello({ persistentBytes: 50 }), null);
    const small = table.open(hello({ persistentBytes: 20 }), null);
    queue.add(big, 1);
    queue.add(small, 1);
    const first = queue.admitWaiting();
    expect(first.map((o) => [o.kind, o.job.id])).toEqual([['admitted', small.id]]);
    expect(queue.has(big)).toBe(true);
    expect(queue.waitReason(big.id)).toBe('waits for 20 bytes');
    memory.setFree(60);
    expect(queue.admitWaiting().map((o) => [o.kind, o.job.id])).toEqual([['admitted', big.id]]);
    expect(queue.has(big)).toBe(false);
  });

  it('owes a waiting job an answer for each of its device requests, oldest first', () => {
    const memory = fakeMemory(100);
    memory.setFree(0);
    const { queue } = queueOver(memory);
    const job = table.open(hello({ persistentBytes: 10 }), null);
    queue.add(job, 4);
    queue.add(job, 9);
    expect(queue.admitWaiting()).toEqual([]);
    memory.setFree(10);
    expect(queue.admitWaiting()).toEqual([{ kind: 'admitted', job, gpuId: 'gpu0', laneId: 'lane-1', rids: [4, 9] }]);
  });

  it('refuses for good a job that could not fit on an empty GPU', () => {
    const { queue } = queueOver(fakeMemory(100));
    const job = table.open(hello({ persistentBytes: 500 }), null);
    queue.add(job, 2);
    expect(queue.admitWaiting()).toEqual([{ kind: 'refused', job, reason: 'needs 500, more than the GPU has', rids: [2] }]);
  });

  it('logs why a job waits once per reason, not on every try', () => {
    const memory = fakeMemory(100);
    memory.setFree(0);
    const { queue, log } = queueOver(memory);
    const job = table.open(hello({ persistentBytes: 10 }), null);
    queue.add(job, 1);
    queue.admitWaiting();
    queue.admitWaiting();
    memory.setFree(5);
    queue.admitWaiting();
    expect(log).toEqual([`salus: ${job.id} waits: waits for 10 bytes`, `salus: ${job.id} waits: waits for 5 bytes`]);
  });

  it('drops a job that ended while it waited, with what it was owed', () => {
    const memory = fakeMemory(100);
    memory.setFree(0);
    const { queue } = queueOver(memory);
    const job = table.open(hello({ persistentBytes: 10 }), null);
    queue.add(job, 1);
    queue.admitWaiting();
    queue.remove(job);
    memory.setFree(100);
    expect(queue.admitWaiting()).toEqual([]);
    expect(queue.waitReason(job.id)).toBeUndefined();
  });

  it('asks for what an earlier clean run measured when a job declares no memory, looked up once', () => {
    const memory = fakeMemory(1000);
    memory.setFree(0);
    let lookups = 0;
    const history = {
      measuredProfile: () => { lookups += 1; return { jobId: 'job-3', runId: 2, persistentBytes: 70, ephemeralBytes: 30 }; },
    } as unknown as ServiceHistory;
    const { queue, log } = queueOver(memory, history);
    const job = table.open(hello(undefined, { file: '/jobs/train.js', args: ['--fast'] }), null);
    const declared = table.open(hello({ ephemeralBytes: 5 }, { file: '/jobs/train.js' }), null);
    queue.add(job, 1);
    queue.add(declared, 1);
    queue.admitWaiting();
    queue.admitWaiting();
    expect(lookups).toBe(1);
    expect(memory.asked.filter((r) => r.jobId === job.id).map((r) => r.ephemeralBytes)).toEqual([30, 30]);
    expect(memory.asked.filter((r) => r.jobId === declared.id).map((r) => r.ephemeralBytes)).toEqual([5, 5]);
    expect(log[0]).toMatch(new RegExp(`${job.id} declares no memory; job-3 \\(run 2\\) ran it`));
  });
});
