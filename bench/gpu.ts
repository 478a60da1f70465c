/**
 * `npm run bench:gpu`: E4 (switching) and E5 (overhead per zoo workload) on a
 * hardware GPU through Vulkan, added to `bench/results/summary.json` as rows of
 * their own (`E4.gpu`, `E5.tfjs-mlp.gpu`, …) whose `gpu` names the card, beside
 * the software GPU's rows.
 *
 * Usage: `node dist/bench/gpu.js [--quick] [--allow-software]`. It asks a fresh
 * `salus serve` which adapter it opened and stops with exit code 3 and a message
 * saying how to get a Vulkan loader when that is a software one (SwiftShader),
 * unless `--allow-software` (to test this path, or to compare). docs/evaluation.md
 * says how to bring a Vulkan loader to an NVIDIA machine.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { machineFacts, ROOT, serviceGpu } from './harness.js';
import { benchSwitch, SWITCH_DEFAULTS, SWITCH_QUICK } from './switchLatency.js';
import { benchOverhead } from './overhead.js';
import { addSummaryRows, formatSummary, readSummary, summaryPath, type SummaryRow } from './summary.js';
import type { GpuInfo } from '../core/protocol/state.js';

/** What a row's `gpu` says: the adapter's description (or vendor and device) and backend. */
export function gpuName(gpu: GpuInfo): string {
  return `${gpu.description || `${gpu.vendor} ${gpu.device}`.trim()} (${gpu.backend}${gpu.isSoftware ? ', software' : ''})`;
}

/** The same row, measured on `gpu`: `.gpu` after the id's experiment part. */
export function onGpu(row: SummaryRow, gpu: string): SummaryRow {
  const [experiment, ...workload] = row.id.split('.');
  return { ...row, id: [experiment, ...workload, 'gpu'].join('.'), gpu };
}

export const NO_HARDWARE_GPU = [
  'bench:gpu: the service opened a software adapter, not a hardware GPU.',
  'On NVIDIA machines, WebGPU (Dawn) reaches the card through Vulkan: install the Vulkan loader',
  '(Debian/Ubuntu: apt-get install libvulkan1) and make sure the driver\'s ICD file exists',
  '(/usr/share/vulkan/icd.d/nvidia_icd.json or /etc/vulkan/icd.d/nvidia_icd.json; in a container,',
  'NVIDIA_DRIVER_CAPABILITIES must include graphics), unset VK_ICD_FILENAMES if it points at SwiftShader,',
  'and check with `vulkaninfo --summary`. See docs/evaluation.md. --allow-software runs anyway.',
].join('\n');

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, 'allow-software': { type: 'boolean', default: false } } });
  const gpu = await serviceGpu();
  const name = gpuName(gpu);
  if (gpu.isSoftware && !values['allow-software']) {
    process.stderr.write(`${NO_HARDWARE_GPU}\nAdapter: ${name}\n`);
    return 3;
  }
  process.stdout.write(`bench:gpu: ${name}\n`);
  const quick = values.quick ?? false;
  const results = [await benchSwitch(quick ? SWITCH_QUICK : SWITCH_DEFAULTS), await benchOverhead({ quick })];
  const rows = results.flatMap((r) => r.summaryRows ?? []).map((row) => onGpu(row, name));
  // The summary's machine and gpu stay those of the software runs it already holds; these rows carry their own gpu.
  const before = readSummary(summaryPath(ROOT));
  const summary = addSummaryRows(summaryPath(ROOT), rows, {
    machine: Object.keys(before.machine).length ? before.machine : { ...machineFacts(), quick }, gpu: before.gpu || name,
  });
  process.stdout.write(`\n${formatSummary(summary.rows)}\n\nbench:gpu: rows added to ${summaryPath(ROOT)}\n`);
  return 0;
}

// Imported by tests for its helpers; runs only as the entry point.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = await main();
