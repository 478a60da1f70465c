// The service's heart on two GPUs, in-process: two GPU setups over the one test device (each with its own
// ledger, lanes and scheduler, which is what the service keeps per GPU), jobs placed, pinned, waiting on
// their GPU, killed there, and the policy changed on both.
import { describe, expect, it } from 'vitest';
import type { GpuSetup } from '../../../core/service/serviceGpu.js';
import type { MemoryMap } from '../../../core/protocol/state.js';
import { MiB, useService } from './harness.js';

const harness = useService();

/** Two GPUs of `capacityBytes` each, over the test's device. */
function twoGpus(capacityBytes: number): GpuSetup[] {
  return [0, 1].map(() => ({ gpu: harness.gpu, capacityBytes, capacitySource: 'test' }));
}

describe('a service on two GPUs', () => {
  it('puts two jobs that do not fit together one on each GPU, and says where in jobs and memory', async () => {
    harness.start({ gpus: twoGpus(8 * MiB) });
    const a = await harness.job({ hints: { persistentBytes: 5 * MiB } });
    const b = await harness.job({ hints: { persistentBytes: 5 * MiB } });
    expect((await a.peer.requestDevice()).error).toBeUndefined();
    expect((await b.peer.requestDevice()).error).toBeUndefined();
    const infos = harness.service.jobInfos();
    expect(infos.map((job) => [job.id, job.gpu, job.lane])).toEqual([['job-1', 'gpu0', 'gpu0/lane-1'], ['job-2', 'gpu1', 'gpu1/lane-1']]);
    const memory: MemoryMap = harness.service.memoryMap();
    expect(memory.gpus?.map((gpu) => [gpu.id, gpu.capacityBytes, gpu.jobs.map((job) => job.id)])).toEqual([['gpu0', 8 * MiB, ['job-1']], ['gpu1', 8 * MiB, ['job-2']]]);
    expect(memory.capacityBytes).toBe(16 * MiB);
    expect(memory.usedBytes).toBe(memory.gpus![0].usedBytes + memory.gpus![1].usedBytes);
    expect(memory.lanes.map((lane) => lane.id)).toEqual(['gpu0/lane-1', 'gpu1/lane-1']);
    expect(harness.service.snapshot().gpus?.map((gpu) => gpu.id)).toEqual(['gpu0', 'gpu1']);
  });

  it('keeps a pinned job waiting on its GPU, admits it there when a kill returns the bytes, and refuses what fits nowhere', async () => {
    harness.start({ gpus: twoGpus(8 * MiB) });
    const first = await harness.job({ hints: { persistentBytes: 5 * MiB, gpu: 'gpu1' } });
    await first.peer.requestDevice();
    const pinned = await harness.job({ hints: { persistentBytes: 5 * MiB, gpu: 'gpu1' } });
    const reply = pinned.peer.requestDevice();
    await pinned.peer.next((m) => m.t === 'state' && m.state === 'queued', 'queued');
    expect(harness.service.memoryMap().gpus!.map((gpu) => gpu.jobs.length)).toEqual([0, 1]);
    harness.service.kill(first.jobId);
    expect((await reply).error).toBeUndefined();
    expect(harness.service.jobInfos().find((job) => job.id === pinned.jobId)?.gpu).toBe('gpu1');
    expect(harness.service.memoryMap().gpus!.map((gpu) => gpu.jobs.map((job) => job.id))).toEqual([[], [pinned.jobId]]);

    const huge = await harness.job({ hints: { persistentBytes: 20 * MiB } });
    const refused = await huge.peer.requestDevice();
    expect(refused.error?.message).toMatch(/the largest GPU, gpu0, of 8 MiB/);
  });

  it('changes the policy on every GPU, and a bad knob on none', async () => {
    const service = harness.start({ gpus: twoGpus(8 * MiB) });
    expect(service.setPolicy('FAIR').name).toBe('FAIR');
    expect(service.gpus.map((gpu) => gpu.scheduler.policyInfo().name)).toEqual(['FAIR', 'FAIR']);
    expect(() => service.setPolicyParams({ holdMs: -5 })).toThrow();
    expect(service.gpus.map((gpu) => gpu.scheduler.policyInfo().params.holdMs)).toEqual([service.policyInfo().params.holdMs, service.policyInfo().params.holdMs]);
    expect(service.describe()).toMatch(/^gpu0: .*; gpu1: .*, policy FAIR$/);
  });

  it('tells an unplaced job what every GPU offers: the least maximum of each limit, the largest alignment, common features', () => {
    const gpu = harness.gpu;
    const smaller = { ...gpu, limits: { ...gpu.limits, maxBufferSize: 1024, minStorageBufferOffsetAlignment: 512 }, info: { ...gpu.info, features: gpu.info.features.slice(1) } };
    const service = harness.start({ gpus: [{ gpu, capacityBytes: 8 * MiB, capacitySource: 'test' }, { gpu: smaller, capacityBytes: 8 * MiB, capacitySource: 'test' }] });
    const welcome = service.welcomeGpu({});
    expect(welcome.limits.maxBufferSize).toBe(1024);
    expect(welcome.limits.minStorageBufferOffsetAlignment).toBe(512);
    expect(welcome.limits.maxComputeWorkgroupSizeX).toBe(gpu.limits.maxComputeWorkgroupSizeX);
    expect(welcome.info.features).toEqual(gpu.info.features.slice(1));
    // A pinned job hears its own GPU's.
    expect(service.welcomeGpu({ gpu: 'gpu0' }).limits.maxBufferSize).toBe(gpu.limits.maxBufferSize);
    expect(service.welcomeGpu({ gpu: 'gpu1' }).limits.maxBufferSize).toBe(1024);
  });
});
