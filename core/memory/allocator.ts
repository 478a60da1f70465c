/**
 * The narrow slice of the GPU the memory manager uses: create a buffer, zero a
 * prefix of one. Tests wrap a real device's allocator to count creates and destroys.
 */

/** WebGPU's GPUBufferUsage bits (fixed by the spec), so this folder needs no WebGPU globals installed. */
export const BufferUsage = {
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
} as const;

/** Every usage bit WebGPU defines; anything else makes createBuffer fail validation. */
export const ALL_USAGE_BITS = Object.values(BufferUsage).reduce((all, bit) => all | bit, 0);

/** What createBuffer takes (GPUBufferDescriptor's fields the service passes through). */
export interface BufferDescriptor {
  size: number;
  usage: number;
  label?: string;
  mappedAtCreation?: boolean;
}

/** Creates and zeroes buffers on the shared device. */
export interface BufferAllocator {
  /** Creates a buffer exactly as described; validation errors surface in the caller's error scope. */
  createBuffer(descriptor: BufferDescriptor): GPUBuffer;
  /** Zeroes bytes [0, sizeBytes) of buffer, ordered on the device queue (encoder.clearBuffer + submit). */
  clearBuffer(buffer: GPUBuffer, sizeBytes: number): void;
  /** The device's maxBufferSize; pooled buffers are never rounded up past it. Unlimited when absent. */
  readonly maxBufferSizeBytes?: number;
  /** Paging (absent: nothing can page): copies bytes [srcOffset, srcOffset + sizeBytes) of src to the start of dst, on the queue. */
  copyBuffer?(src: GPUBuffer, srcOffset: number, dst: GPUBuffer, sizeBytes: number): void;
  /** Paging: maps a MAP_READ buffer once the queue's work before is done and returns a copy of its first sizeBytes. */
  readMapped?(buffer: GPUBuffer, sizeBytes: number): Promise<Uint8Array>;
  /** Paging: writes bytes at the start of buffer, on the queue (before anything submitted later). */
  writeBuffer?(buffer: GPUBuffer, bytes: Uint8Array): void;
}

/**
 * Buffers up to this size are zeroed by a queue write rather than a clear pass. Dawn
 * records queue writes into the commands it submits with the queue's next submit, so
 * zeroing a small reused buffer costs a copy of its bytes, not a submit (on a software
 * GPU a submit costs far more than copying a few KiB; TF.js reuses ~50 small buffers
 * a step).
 */
const ZERO_WRITE_MAX_BYTES = 256 * 1024;
const zeros = new Uint8Array(ZERO_WRITE_MAX_BYTES);

/** GPUMapMode.READ (fixed by the spec). */
const MAP_MODE_READ = 0x1;

/**
 * The allocator over a real device. `clearBuffer` rounds sizeBytes up to a multiple
 * of 4 (clearBuffer's alignment), capped at the buffer's size, and does nothing for 0.
 * Because the zeroing (a queue write, or a clear pass submitted at once) is ordered on
 * the device's one queue, it runs after every command already submitted that uses the
 * buffer and before any queue write or submit made later.
 */
export function deviceAllocator(device: GPUDevice): BufferAllocator {
  return {
    maxBufferSizeBytes: device.limits.maxBufferSize,
    createBuffer(descriptor) {
      return device.createBuffer(descriptor);
    },
    clearBuffer(buffer, sizeBytes) {
      const clearBytes = Math.min(Math.ceil(sizeBytes / 4) * 4, buffer.size);
      if (clearBytes <= 0) return;
      if (clearBytes <= ZERO_WRITE_MAX_BYTES) {
        // Small: a queue write of zeros rides in the device's next submit; a clear pass would be a submit of its own.
        device.queue.writeBuffer(buffer, 0, zeros, 0, clearBytes);
        return;
      }
      const encoder = device.createCommandEncoder({ label: 'salus: zero a reused pool buffer' });
      encoder.clearBuffer(buffer, 0, clearBytes);
      device.queue.submit([encoder.finish()]);
    },
    copyBuffer(src, srcOffset, dst, sizeBytes) {
      const encoder = device.createCommandEncoder({ label: 'salus: page out' });
      encoder.copyBufferToBuffer(src, srcOffset, dst, 0, sizeBytes);
      device.queue.submit([encoder.finish()]);
    },
    async readMapped(buffer, sizeBytes) {
      await buffer.mapAsync(MAP_MODE_READ, 0, sizeBytes);
      const bytes = new Uint8Array(buffer.getMappedRange(0, sizeBytes).slice(0));
      buffer.unmap();
      return bytes;
    },
    writeBuffer(buffer, bytes) {
      device.queue.writeBuffer(buffer, 0, bytes);
    },
  };
}

/**
 * Whether a buffer with this descriptor may live in a lane's pool: it can be zeroed
 * (COPY_DST), is never mapped (no MAP_READ, MAP_WRITE, mappedAtCreation), has only
 * valid usage bits and a non-zero size.
 */
export function isPoolable(descriptor: BufferDescriptor): boolean {
  const { usage, size } = descriptor;
  return (
    Number.isInteger(usage) &&
    (usage & ~ALL_USAGE_BITS) === 0 &&
    (usage & BufferUsage.COPY_DST) !== 0 &&
    (usage & (BufferUsage.MAP_READ | BufferUsage.MAP_WRITE)) === 0 &&
    !descriptor.mappedAtCreation &&
    size > 0
  );
}
