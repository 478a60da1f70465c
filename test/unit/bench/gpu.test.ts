/**
 * The GPU runs' rows (bench/gpu.ts, `npm run bench -- --gpu`): named after the card,
 * kept apart from the software GPU's rows by id, and added to the summary without
 * taking over its machine and gpu. (The refusal of a software adapter, through the
 * compiled bench: test/integration/benchGpu.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addGpuRows, gpuName, onGpu } from '../../../bench/gpu.js';
import { addSummaryRows, type SummaryRow } from '../../../bench/summary.js';

const H200 = gpuName({ vendor: 'nvidia', architecture: 'hopper', device: 'H200', description: 'NVIDIA H200', backend: 'vulkan', isSoftware: false, features: [] });
const row = (id: string, ratio: number): SummaryRow => ({ id, what: 'x', ours: 1, baseline: ratio, unit: 'ms', ratio, paper: '' });

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('the GPU runs\' rows', () => {
  it('name the card and keep the ids apart from the software rows', () => {
    expect(H200).toBe('NVIDIA H200 (vulkan)');
    expect(gpuName({ vendor: 'google', architecture: '', device: 'swiftshader', description: '', backend: 'vulkan', isSoftware: true, features: [] })).toBe('google swiftshader (vulkan, software)');
    expect(onGpu(row('E5.tfjs-mlp', 1), H200)).toMatchObject({ id: 'E5.tfjs-mlp.gpu', gpu: 'NVIDIA H200 (vulkan)' });
    expect(onGpu(row('E4', 1), H200).id).toBe('E4.gpu');
  });

  it('go in beside the software rows, leaving the summary\'s machine and gpu those of the software runs', () => {
    dir = mkdtempSync(join(tmpdir(), 'salus-gpu-rows-'));
    const path = join(dir, 'summary.json');
    addSummaryRows(path, [row('E4', 600), row('E5.tfjs-mlp', 0.9)], { machine: { cpuCount: 2 }, gpu: 'SwiftShader (vulkan, software)' });
    const summary = addGpuRows(path, [row('E4', 900), row('E5.tfjs-mlp', 0.99)], H200, { cpuCount: 16 });
    expect(summary.rows.map((r) => [r.id, r.ratio, r.gpu ?? null])).toEqual([
      ['E4', 600, null], ['E5.tfjs-mlp', 0.9, null], ['E4.gpu', 900, H200], ['E5.tfjs-mlp.gpu', 0.99, H200],
    ]);
    expect(summary).toMatchObject({ machine: { cpuCount: 2 }, gpu: 'SwiftShader (vulkan, software)' });
  });

  it('set the machine and gpu of a summary that had none', () => {
    dir = mkdtempSync(join(tmpdir(), 'salus-gpu-rows-'));
    expect(addGpuRows(join(dir, 'summary.json'), [row('E4', 900)], H200, { cpuCount: 16 })).toMatchObject({ machine: { cpuCount: 16 }, gpu: H200 });
  });
});
