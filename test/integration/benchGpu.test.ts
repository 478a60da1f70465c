/**
 * `npm run bench -- --gpu` on a machine without a hardware GPU (this one: SwiftShader):
 * it asks the real compiled service which adapter it opened, refuses with exit
 * code 3 and says how to get a Vulkan loader, and writes nothing to the summary.
 * Its rows' names: test/unit/bench/gpu.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summaryPath } from '../../bench/summary.js';
import { ROOT } from '../helpers/service.js';

describe('bench --gpu', () => {
  it('refuses a software adapter, saying how to bring a Vulkan loader, and leaves the summary alone', () => {
    const path = summaryPath(ROOT);
    const before = existsSync(path) ? readFileSync(path, 'utf8') : null;
    const runtimeDir = mkdtempSync(join(tmpdir(), 'salus-bench-gpu-'));
    const run = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', 'run.js'), '--gpu'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir },
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toContain('software adapter');
    expect(run.stderr).toContain('libvulkan1');
    expect(run.stderr).toMatch(/Adapter: .*software/);
    expect(existsSync(path) ? readFileSync(path, 'utf8') : null).toBe(before);
  }, 90_000);

  it('runs only the benchmarks a GPU changes, naming them', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'dist', 'bench', 'run.js'), '--gpu', '--only', 'wire'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('bench: unknown benchmark wire with --gpu; choose from switch, overhead\n');
  });
});
