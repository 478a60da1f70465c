/**
 * `npm run bench -- --gpu`: E4 (switching) and E5 (overhead per zoo workload) on
 * a hardware GPU through Vulkan, added to `bench/results/summary.json` as rows of
 * their own (`E4.gpu`, `E5.tfjs-mlp.gpu`, …) whose `gpu` names the card, beside
 * the software GPU's rows. bench/run.ts asks a fresh `salus serve` which adapter
 * it opened and stops with exit code 3 and NO_HARDWARE_GPU when that is a
 * software one (SwiftShader), unless `--allow-software` (to test this path, or to
 * compare). docs/evaluation.md says how to bring a Vulkan loader to an NVIDIA machine.
 */
import { addSummaryRows, readSummary, type Summary, type SummaryRow } from './summary.js';
import type { GpuInfo } from '../core/protocol/state.js';

/** The benchmarks a GPU run may run: those with summary rows that a hardware GPU changes. */
export const GPU_BENCHES: readonly string[] = ['switch', 'overhead'];

/** What a row's `gpu` says: the adapter's description (or vendor and device) and backend. */
export function gpuName(gpu: GpuInfo): string {
  return `${gpu.description || `${gpu.vendor} ${gpu.device}`.trim()} (${gpu.backend}${gpu.isSoftware ? ', software' : ''})`;
}

/** The same row, measured on `gpu`: `.gpu` after the id's experiment part. */
export function onGpu(row: SummaryRow, gpu: string): SummaryRow {
  const [experiment, ...workload] = row.id.split('.');
  return { ...row, id: [experiment, ...workload, 'gpu'].join('.'), gpu };
}

/** Why a GPU run refused the adapter it got, and how to get a hardware one. */
export const NO_HARDWARE_GPU = [
  'bench --gpu: the service opened a software adapter, not a hardware GPU.',
  'On NVIDIA machines, WebGPU (Dawn) reaches the card through Vulkan: install the Vulkan loader',
  '(Debian/Ubuntu: apt-get install libvulkan1) and make sure the driver\'s ICD file exists',
  '(/usr/share/vulkan/icd.d/nvidia_icd.json or /etc/vulkan/icd.d/nvidia_icd.json; in a container,',
  'NVIDIA_DRIVER_CAPABILITIES must include graphics), unset VK_ICD_FILENAMES if it points at SwiftShader,',
  'and check with `vulkaninfo --summary`. See docs/evaluation.md. --allow-software runs anyway.',
].join('\n');

/**
 * Adds `rows`, measured on the GPU named `gpu`, to the summary at `path` as `.gpu` rows. The
 * summary's machine and gpu stay those of the software runs it already holds; these rows carry their own.
 */
export function addGpuRows(path: string, rows: readonly SummaryRow[], gpu: string, machine: Record<string, unknown>): Summary {
  const before = readSummary(path);
  return addSummaryRows(path, rows.map((row) => onGpu(row, gpu)), {
    machine: Object.keys(before.machine).length ? before.machine : machine, gpu: before.gpu || gpu,
  });
}
