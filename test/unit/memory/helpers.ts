/**
 * Test doubles for the memory manager: a fake allocator that needs no GPU, and a
 * counting wrapper that records every create, clear and destroy of a real one.
 */
import type { BufferAllocator, BufferDescriptor } from '../../../core/memory/allocator.js';
import type { AllocResult, BufferLease } from '../../../core/memory/types.js';

export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;

/** GPUBufferUsage values, spelled out so these tests need no WebGPU globals. */
export const STORAGE_COPY = 0x0080 | 0x0008 | 0x0004; // STORAGE | COPY_DST | COPY_SRC
export const MAP_READ_COPY_DST = 0x0001 | 0x0008;

/** An allocator that records what happens to every buffer it made. */
export interface CountingAllocator extends BufferAllocator {
  readonly created: GPUBuffer[];
  readonly destroyed: Set<GPUBuffer>;
  readonly clears: Array<{ buffer: GPUBuffer; sizeBytes: number }>;
  /** Buffers created and not destroyed. */
  live(): GPUBuffer[];
}

/** Wraps `inner`, counting creates, clears and destroys (destroy() is wrapped on each buffer). */
export function countingAllocator(inner: BufferAllocator): CountingAllocator {
  const created: GPUBuffer[] = [];
  const destroyed = new Set<GPUBuffer>();
  const clears: Array<{ buffer: GPUBuffer; sizeBytes: number }> = [];
  return {
    created,
    destroyed,
    clears,
    maxBufferSizeBytes: inner.maxBufferSizeBytes,
    live: () => created.filter((buffer) => !destroyed.has(buffer)),
    createBuffer(descriptor: BufferDescriptor) {
      const buffer = inner.createBuffer(descriptor);
      const destroy = buffer.destroy.bind(buffer);
      // Own property shadows the prototype's method; the real destroy still runs.
      Object.defineProperty(buffer, 'destroy', {
        configurable: true,
        value: () => {
          destroyed.add(buffer);
          destroy();
        },
      });
      created.push(buffer);
      return buffer;
    },
    clearBuffer(buffer, sizeBytes) {
      clears.push({ buffer, sizeBytes });
      inner.clearBuffer(buffer, sizeBytes);
    },
    // Paging's operations pass through unchanged (absent when `inner` cannot page).
    copyBuffer: inner.copyBuffer?.bind(inner),
    readMapped: inner.readMapped?.bind(inner),
    writeBuffer: inner.writeBuffer?.bind(inner),
  };
}

/** A GPU-less allocator: buffers are plain objects with size, usage, label and destroy(). */
export function fakeAllocator(): BufferAllocator {
  return {
    createBuffer(descriptor) {
      const buffer = { size: descriptor.size, usage: descriptor.usage, label: descriptor.label ?? '', destroy() {} };
      return buffer as unknown as GPUBuffer;
    },
    clearBuffer() {},
  };
}

/** The lease of a successful allocation; throws with the manager's message otherwise. */
export function leaseOf(result: AllocResult): BufferLease {
  if (!result.ok) throw new Error(`expected an allocation, got: ${result.message}`);
  return result.lease;
}

/** The first sizeBytes of a COPY_SRC buffer, read back through a staging buffer of the test's own. */
export async function readBufferBytes(device: GPUDevice, buffer: GPUBuffer, sizeBytes: number): Promise<Uint8Array> {
  const staging = device.createBuffer({ size: sizeBytes, usage: MAP_READ_COPY_DST, label: 'test readback' });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, sizeBytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(0x0001);
  const bytes = new Uint8Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return bytes;
}
