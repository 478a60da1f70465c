// The shared device's Dawn toggles (core/platform/gpu.ts SHARED_DEVICE_TOGGLES) on a real (SwiftShader) device:
// resolved timestamps keep their nanoseconds there, and a device with Dawn's defaults (a local device's) rounds
// them down to a coarse step, so the test would fail if the toggle stopped reaching the device.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAdapter, SHARED_DEVICE_TOGGLES } from '../../../core/platform/gpu.js';

const devices: GPUDevice[] = [];

async function deviceWith(toggles: readonly string[]): Promise<GPUDevice | null> {
  const { adapter } = await openAdapter({}, toggles);
  if (!adapter.features.has('timestamp-query')) return null;
  const device = await adapter.requestDevice({ requiredFeatures: ['timestamp-query'] });
  devices.push(device);
  return device;
}

/** `count` timestamps, one per empty compute pass, resolved and read back (ns). */
async function stamps(device: GPUDevice, count: number): Promise<bigint[]> {
  const querySet = device.createQuerySet({ type: 'timestamp', count });
  const resolved = device.createBuffer({ size: count * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: count * 8, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  for (let i = 0; i < count; i++) encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: i } }).end();
  encoder.resolveQuerySet(querySet, 0, count, resolved, 0);
  encoder.copyBufferToBuffer(resolved, 0, readback, 0, count * 8);
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const values = [...new BigUint64Array(readback.getMappedRange())];
  readback.unmap();
  return values;
}

/** Whether every value is a multiple of 2^16 ns, the step Dawn's quantization leaves (low bits cleared). */
const allQuantized = (values: bigint[]) => values.every((v) => v % 65536n === 0n);

let shared: GPUDevice | null;
let plain: GPUDevice | null;

beforeAll(async () => {
  shared = await deviceWith(SHARED_DEVICE_TOGGLES);
  plain = await deviceWith([]);
});

afterAll(() => {
  for (const device of devices) device.destroy();
});

describe('the shared device\'s toggles', () => {
  it('resolve timestamps to the nanosecond on the shared device, and coarsely with Dawn\'s defaults', async () => {
    if (!shared || !plain) throw new Error('the adapter has no timestamp-query (SwiftShader has it)');
    const fine = await stamps(shared, 16);
    const coarse = await stamps(plain, 16);
    expect(fine.every((v) => v > 0n)).toBe(true);
    // Sixteen stamps all on a 2^16 ns grid by chance: about 2^-256.
    expect(allQuantized(fine)).toBe(false);
    expect(allQuantized(coarse)).toBe(true);
    // Monotonic either way.
    for (const values of [fine, coarse]) for (let i = 1; i < values.length; i++) expect(values[i] >= values[i - 1]).toBe(true);
  });
});
