/**
 * Which GPUs `salus serve` shares and how much memory each may hand out:
 * `--gpus` chooses among the adapters Dawn offers (core/platform/gpu.ts,
 * `listAdapters`), `--memory SIZE` sizes each and `--memory ID=SIZE,…` each
 * its own; a GPU without a size is detected (core/memory/capacity.ts).
 */
import { listAdapters, openGpu, type GpuOptions, type ListedAdapter, type OpenedGpu } from '../platform/gpu.js';
import { detectCapacity } from '../memory/capacity.js';
import { gpuIdAt, type GpuMemoryFlag } from '../platform/gpuId.js';
import type { GpuSetup } from '../service/serviceGpu.js';



const NATIVE_BACKENDS = new Set(['vulkan', 'metal', 'd3d12']);

/**
 * The adapters `--gpus` chooses from `listed`, in Dawn's order. Absent: every hardware adapter, else null
 * (the caller opens Dawn's default adapter, as a single-GPU service always did). `all`: every adapter;
 * `hardware`, `software`: those; else a comma list of positions in Dawn's list or parts of adapter names.
 * Adapters that share a name are one (dawn.node can open only the first of them by name).
 */
export function chooseAdapters(listed: readonly ListedAdapter[], selection: string | undefined): ListedAdapter[] | null {
  // A GPU Dawn lists under several backends is one: its entry of the platform's own API (Vulkan, Metal, D3D12) is kept.
  const preferred = [...listed].sort((a, b) => Number(!NATIVE_BACKENDS.has(a.backend)) - Number(!NATIVE_BACKENDS.has(b.backend)));
  const distinct = preferred.filter((entry, index) => preferred.findIndex((other) => other.name === entry.name) === index);
  if (selection === undefined || selection === '') {
    const hardware = distinct.filter((entry) => !entry.isSoftware);
    return hardware.length > 0 ? hardware : null;
  }
  const word = selection.trim().toLowerCase();
  if (word === 'all') return distinct;
  if (word === 'hardware' || word === 'software') return distinct.filter((entry) => entry.isSoftware === (word === 'software'));
  const chosen: ListedAdapter[] = [];
  for (const item of selection.split(',').map((part) => part.trim()).filter(Boolean)) {
    const found = /^\d+$/.test(item) ? distinct[Number(item)] : distinct.find((entry) => entry.name.toLowerCase().includes(item.toLowerCase()));
    if (!found) throw new Error(`--gpus: no adapter '${item}'; the adapters are ${describeListed(distinct)}`);
    if (!chosen.includes(found)) chosen.push(found);
  }
  return chosen;
}

function describeListed(listed: readonly ListedAdapter[]): string {
  return listed.length === 0 ? '(none)' : listed.map((entry, index) => `${index}: ${entry.name} (${entry.backend})`).join(', ');
}

/** What `salus serve` was told about its GPUs. */
export interface ServeGpuOptions extends GpuOptions {
  /** `--gpus`. */
  gpus?: string;
  /** `--memory`, read. */
  memory?: GpuMemoryFlag;
  /** Where it says which GPUs it found and which it left out. */
  log?: (line: string) => void;
}

/** Opens the chosen GPUs and sizes each; throws (NoGpuError where there is none) before anything starts. */
export async function openServiceGpus(options: ServeGpuOptions): Promise<GpuSetup[]> {
  let opened: OpenedGpu[];
  if (options.adapter !== undefined && options.gpus === undefined) {
    opened = [await openGpu(options)];
  } else {
    const listed = await listAdapters(options);
    const chosen = chooseAdapters(listed, options.gpus);
    if (chosen !== null && chosen.length === 0) throw new Error(`--gpus ${options.gpus}: no adapter matches; the adapters are ${describeListed(listed)}`);
    opened = chosen === null ? [await openGpu(options)] : [];
    for (const entry of chosen ?? []) opened.push(await openGpu({ ...options, backend: entry.backend, adapter: entry.name }));
    for (const entry of chosen ?? []) {
      const twins = listed.filter((other) => other.name === entry.name && other.backend === entry.backend).length;
      if (twins > 1) options.log?.(`salus: ${twins} adapters are named '${entry.name}'; dawn.node opens only the first of them by name, so ${twins - 1} of them stay unused`);
    }
    const left = listed.filter((entry) => !chosen?.some((c) => c.name === entry.name));
    if (chosen !== null && left.length > 0) options.log?.(`salus: left out ${left.map((entry) => `${entry.name} (${entry.backend})`).join(', ')}; --gpus chooses`);
  }
  const known = new Set(opened.map((_, index) => gpuIdAt(index)));
  const unknown = Object.keys(options.memory?.byGpu ?? {}).filter((id) => !known.has(id));
  if (unknown.length > 0) throw new Error(`--memory names ${unknown.join(', ')}, but the GPUs are ${[...known].join(', ')}`);
  return Promise.all(opened.map(async (gpu, index): Promise<GpuSetup> => {
    const capacity = await detectCapacity({
      configuredBytes: options.memory?.byGpu[gpuIdAt(index)] ?? options.memory?.eachBytes,
      isSoftware: gpu.info.isSoftware,
      vendor: gpu.info.vendor,
      // Dawn's list names the model (`NVIDIA GeForce RTX 4090`) where it chose from it; else as before.
      deviceName: options.gpus === undefined && opened.length === 1 ? gpu.info.device : gpu.name,
    });
    return { id: gpuIdAt(index), gpu, capacityBytes: capacity.bytes, capacitySource: capacity.source };
  }));
}
