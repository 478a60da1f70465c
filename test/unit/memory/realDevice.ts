/**
 * A memory manager over a real shared device (SwiftShader here) for one test
 * file: the device lives for the whole file, each test runs inside error scopes
 * that must stay empty, and after each test every job is released and nothing
 * may be left: no ledger entry, no live GPU buffer.
 */
import { afterEach, beforeEach, expect } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
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
  const file = useFileDevice(label);
  let allocator: CountingAllocator | undefined;
  let manager: MemoryManager | undefined;
  beforeEach(() => {
    file.device.pushErrorScope('validation');
    file.device.pushErrorScope('out-of-memory');
  });
  afterEach(async () => {
    for (const job of manager?.snapshot().jobs ?? []) manager!.release(job.id);
    expect(manager?.liveBuffers()).toEqual({ count: 0, bytes: 0 });
    expect(allocator?.live()).toEqual([]);
    expect(await file.device.popErrorScope()).toBeNull();
    expect(await file.device.popErrorScope()).toBeNull();
  });
  return {
    get device() { return file.device; },
    get allocator() { return allocator!; },
    get manager() { return manager!; },
    makeManager(capacityBytes) {
      allocator = countingAllocator(deviceAllocator(file.device));
      manager = createMemoryManager({ capacityBytes, capacitySource: '--memory', allocator });
      return manager;
    },
  };
}
