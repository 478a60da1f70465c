/**
 * The cost of a switch that pages (issue 8): one job's persistent buffer of
 * `mib` MiB paged out to host memory and back by the service's memory manager
 * (core/memory/paging.ts: chunked MAP_READ staging counted in the ledger, then
 * a new buffer written from the host copy), against the plainest round trip of
 * the same bytes on the same device: one copy into a MAP_READ buffer, its
 * readback, and a writeBuffer into a new buffer. Both in MiB/s of the buffer's
 * size per round trip (out and in), alternating, `rounds` each, on a device of
 * this process (no socket: paging happens inside the service).
 */
import { localNavigatorGpu } from '../core/platform/gpu.js';
import { BufferUsage, deviceAllocator } from '../core/memory/allocator.js';
import { createMemoryManager } from '../core/memory/memoryManager.js';
import type { BenchResult } from './report.js';
import { round, rounded, summarize } from './stats.js';

export interface PagingCostOptions {
  mib: number;
  rounds: number;
}

export const PAGING_DEFAULTS: PagingCostOptions = { mib: 64, rounds: 5 };
export const PAGING_QUICK: PagingCostOptions = { mib: 32, rounds: 3 };

const MIB = 1024 * 1024;
const STORAGE_COPY = BufferUsage.STORAGE | BufferUsage.COPY_SRC | BufferUsage.COPY_DST;

/** One page-out and page-in of a `bytes` buffer through a fresh memory manager; its ms. */
async function pagedRoundTripMs(device: GPUDevice, bytes: number): Promise<number> {
  const memory = createMemoryManager({ capacityBytes: 4 * bytes, capacitySource: 'bench', allocator: deviceAllocator(device) });
  memory.admit({ jobId: 'bench' }, { maxLanes: 1 });
  const result = memory.allocate('bench', { size: bytes, usage: STORAGE_COPY, label: 'paged' });
  if (!result.ok) throw new Error(`bench: ${result.message}`);
  device.queue.writeBuffer(result.lease.buffer, 0, new Uint8Array(bytes).fill(7));
  await device.queue.onSubmittedWorkDone();
  const start = performance.now();
  const out = await memory.pageOut(result.lease);
  const back = memory.pageIn(result.lease);
  await device.queue.onSubmittedWorkDone();
  const elapsedMs = performance.now() - start;
  if (!out.ok || !back.ok) throw new Error(`bench: paging failed: ${out.ok ? '' : out.message} ${back.ok ? '' : back.message}`);
  memory.release('bench');
  return elapsedMs;
}

/** The same bytes out and back the plain way: copy to a MAP_READ buffer, read it, write a new buffer; its ms. */
async function plainRoundTripMs(device: GPUDevice, bytes: number): Promise<number> {
  const source = device.createBuffer({ size: bytes, usage: STORAGE_COPY });
  device.queue.writeBuffer(source, 0, new Uint8Array(bytes).fill(7));
  await device.queue.onSubmittedWorkDone();
  const start = performance.now();
  const staging = device.createBuffer({ size: bytes, usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(source, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const host = new Uint8Array(staging.getMappedRange()).slice();
  staging.unmap();
  const target = device.createBuffer({ size: bytes, usage: STORAGE_COPY });
  device.queue.writeBuffer(target, 0, host);
  await device.queue.onSubmittedWorkDone();
  const elapsedMs = performance.now() - start;
  for (const buffer of [source, staging, target]) buffer.destroy();
  return elapsedMs;
}

/** Runs both round trips alternately and reports MiB/s and their ratio. */
export async function benchPagingCost(options: PagingCostOptions = PAGING_DEFAULTS): Promise<BenchResult> {
  const gpu = await localNavigatorGpu();
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('bench: no WebGPU adapter');
  const device = await adapter.requestDevice({ label: 'bench: paging cost' });
  try {
    const bytes = options.mib * MIB;
    const paged: number[] = [];
    const plain: number[] = [];
    await pagedRoundTripMs(device, bytes); // warm-up: first-touch allocation on both paths
    await plainRoundTripMs(device, bytes);
    for (let round = 0; round < options.rounds; round++) {
      paged.push(await pagedRoundTripMs(device, bytes));
      plain.push(await plainRoundTripMs(device, bytes));
    }
    const mibPerSecond = (ms: number) => options.mib / (ms / 1000);
    const pagedMiBs = mibPerSecond(summarize(paged).median);
    const plainMiBs = mibPerSecond(summarize(plain).median);
    const ratio = pagedMiBs / plainMiBs;
    return {
      name: 'paging',
      method: `A ${options.mib} MiB persistent buffer paged out and back by the memory manager vs the same bytes copied out to a MAP_READ buffer, read, and written to a new buffer; ${options.rounds} rounds alternating, medians.`,
      rows: [{
        metric: `switch that pages ${options.mib} MiB (out + in)`,
        salus: `${round(pagedMiBs, 0)} MiB/s`,
        reference: `${round(plainMiBs, 0)} MiB/s plain copy`,
        ratio: round(ratio, 2).toString(),
        goal: '',
        met: null,
      }],
      data: { ...options, pagedMs: rounded(summarize(paged)), plainMs: rounded(summarize(plain)), pagedMiBs, plainMiBs, ratio },
    };
  } finally {
    device.destroy();
  }
}
