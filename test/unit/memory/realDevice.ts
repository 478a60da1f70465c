/**
 * A memory manager over a real shared device (SwiftShader here) for one test
 * file: the device lives for the whole file, each test runs inside error scopes
 * that must stay empty, and after each test every job is released and nothing
 * may be left: no ledger entry, no live GPU buffer.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { localNavigatorGpu } from '../../../core/executor/gpu.js';
import { deviceAllocator } from '../../../core/memory/allocator.js';
import { createMemoryManager, type MemoryManager } from '../../../core/memory/memoryManager.js';
import { countingAllocator, type CountingAllocator } from './helpers.js';

/** The file's device, and the manager and allocator of the running test. */
export interface RealDeviceHarness {
  readonly device: GPUDevice;
  readonly allocator: CountingAllocator;
  readonly manager: MemoryManager;
  /** A fresh manager (and counting allocator) of capacityBytes for this test. */
  makeManager(capacityBytes: number): MemoryManager;
}

/** Registers the file's hooks; call once at the top level of a test file. */
export function useRealDeviceManager(label: string): RealDeviceHarness {
  let gpu: GPU | undefined;
  let device: GPUDevice | undefined;
  let allocator: CountingAllocator | undefined;
  let manager: MemoryManager | undefined;
  beforeAll(async () => {
    // Held for the whole file: once Dawn's GPU object is collected, pending mapAsync calls crash the process.
    gpu = await localNavigatorGpu();
    const adapter = await gpu.requestAdapter();
    if (!adapter) throw new Error('no WebGPU adapter (install chromium for SwiftShader)');
    device = await adapter.requestDevice({ label });
  });
  afterAll(() => device?.destroy());
  beforeEach(() => {
    device!.pushErrorScope('validation');
    device!.pushErrorScope('out-of-memory');
  });
  afterEach(async () => {
    for (const job of manager?.snapshot().jobs ?? []) manager!.release(job.id);
    expect(manager?.liveBuffers()).toEqual({ count: 0, bytes: 0 });
    expect(allocator?.live()).toEqual([]);
    expect(await device!.popErrorScope()).toBeNull();
    expect(await device!.popErrorScope()).toBeNull();
  });
  return {
    get device() { return device!; },
    get allocator() { return allocator!; },
    get manager() { return manager!; },
    makeManager(capacityBytes) {
      allocator = countingAllocator(deviceAllocator(device!));
      manager = createMemoryManager({ capacityBytes, capacitySource: '--memory', allocator });
      return manager;
    },
  };
}
