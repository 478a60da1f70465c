/**
 * `npm run bench:gpu` on a machine without a hardware GPU (this one: SwiftShader):
 * it asks the real compiled service which adapter it opened, refuses with exit
 * code 3 and says how to get a Vulkan loader, and writes nothing to the summary.
 * Its rows are the software rows renamed, each naming the card.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gpuName, onGpu } from '../../bench/gpu.js';
import { summaryPath } from '../../bench/summary.js';
import { ROOT } from '../helpers/service.js';

describe('bench:gpu', () => {
  it('refuses a software adapter, saying how to bring a Vulkan loader, and leaves the summary alone', () => {
    const path = summaryPath(ROOT);
    const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
    const runtimeDir = mkdtempSync(join(tmpdir(), 'salus-bench-gpu-'));
    const run = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', 'gpu.js')], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir },
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain('software adapter');
    expect(run.stderr).toContain('libvulkan1');
    expect(run.stderr).toMatch(/Adapter: .*software/);
    expect(existsSync(path) ? readFileSync(path, 'utf8') : null).toBe(before);
  }, 90_000);

  it('names the card on each row and keeps the ids apart from the software rows', () => {
    const gpu = gpuName({ vendor: 'nvidia', architecture: 'hopper', device: 'H200', description: 'NVIDIA H200', backend: 'vulkan', isSoftware: false, features: [] });
    expect(gpu).toBe('NVIDIA H200 (vulkan)');
    const row = { id: 'E5.tfjs-mlp', what: 'x', ours: 1, baseline: 1, unit: 'ms', ratio: 1, paper: '' };
    expect(onGpu(row, gpu)).toMatchObject({ id: 'E5.tfjs-mlp.gpu', gpu: 'NVIDIA H200 (vulkan)' });
    expect(onGpu({ ...row, id: 'E4' }, gpu).id).toBe('E4.gpu');
  });
});
