import { describe, expect, test, vi } from 'vitest';
import {
  HEADROOM_BYTES,
  SOFTWARE_DEFAULT_BYTES,
  UNKNOWN_DEFAULT_BYTES,
  detectCapacity,
  nvidiaSmiRowMiB,
  type CapacityProbes,
} from '../../../core/memory/capacity.js';
import { GiB, MiB } from './helpers.js';

function probes(nvidiaMiB: number | null, controllers: Awaited<ReturnType<CapacityProbes['graphicsControllers']>> = []) {
  return {
    nvidiaSmiMiB: vi.fn(async () => nvidiaMiB),
    graphicsControllers: vi.fn(async () => controllers),
  };
}

describe('detectCapacity', () => {
  test('--memory wins, as given, with no headroom taken and no probe run', async () => {
    const p = probes(24576);
    expect(await detectCapacity({ configuredBytes: 6 * GiB, isSoftware: true, probes: p })).toEqual({ bytes: 6 * GiB, source: '--memory' });
    expect(p.nvidiaSmiMiB).not.toHaveBeenCalled();
    expect(p.graphicsControllers).not.toHaveBeenCalled();
  });

  test('a configured size of 0 or less is rejected', async () => {
    await expect(detectCapacity({ configuredBytes: 0, isSoftware: false, probes: probes(null) })).rejects.toThrow(/--memory must be a positive size/);
  });

  test('a software GPU gets the stated default without asking the platform', async () => {
    const p = probes(24576, [{ model: 'RTX', vram: 24576 }]);
    const capacity = await detectCapacity({ isSoftware: true, vendor: 'google', probes: p });
    expect(capacity).toEqual({ bytes: SOFTWARE_DEFAULT_BYTES, source: 'default for a software GPU; set --memory' });
    expect(SOFTWARE_DEFAULT_BYTES).toBe(4 * GiB);
    expect(p.nvidiaSmiMiB).not.toHaveBeenCalled();
  });

  test('nvidia-smi answers with 300 MiB of headroom taken off, and says so', async () => {
    const capacity = await detectCapacity({ isSoftware: false, vendor: 'nvidia', probes: probes(16384) });
    expect(capacity.bytes).toBe(16384 * MiB - HEADROOM_BYTES);
    expect(capacity.source).toMatch(/^nvidia-smi \(16 GiB total, less 300 MiB headroom\)$/);
  });

  test('nvidia-smi is skipped for another vendor; systeminformation picks the named controller', async () => {
    const p = probes(16384, [
      { model: 'Big Card', vram: 32768 },
      { model: 'AMD Radeon RX 6800', vram: 16384 },
    ]);
    const capacity = await detectCapacity({ isSoftware: false, vendor: 'amd', deviceName: 'AMD Radeon RX 6800', probes: p });
    expect(p.nvidiaSmiMiB).not.toHaveBeenCalled();
    expect(capacity.bytes).toBe(16384 * MiB - HEADROOM_BYTES);
    expect(capacity.source).toMatch(/^systeminformation .*less 300 MiB headroom/);
  });

  test('without a name match, the controller with the most vram wins', async () => {
    const p = probes(null, [{ model: 'iGPU', vram: 512 }, { model: 'dGPU', vram: 8192 }, { model: 'none', vram: null }]);
    expect((await detectCapacity({ isSoftware: false, probes: p })).bytes).toBe(8192 * MiB - HEADROOM_BYTES);
  });

  test('nothing known: the stated 8 GiB default; failing probes count as nothing', async () => {
    const failing: CapacityProbes = {
      nvidiaSmiMiB: async () => Promise.reject(new Error('ENOENT')),
      graphicsControllers: async () => Promise.reject(new Error('boom')),
    };
    expect(await detectCapacity({ isSoftware: false, probes: failing })).toEqual({
      bytes: UNKNOWN_DEFAULT_BYTES,
      source: 'default (GPU memory size unknown; set --memory)',
    });
  });

  test('the real probes answer on this machine without throwing', async () => {
    const capacity = await detectCapacity({ isSoftware: false });
    expect(capacity.bytes).toBeGreaterThan(0);
    expect(capacity.source).toMatch(/nvidia-smi|systeminformation|default/);
  });
});

describe('nvidiaSmiRowMiB', () => {
  const rows = 'NVIDIA A100-SXM4-80GB, 81920\nNVIDIA GeForce RTX 4090, 24564\n';

  test('sizes each adapter as nvidia-smi lists its model, else as the first GPU', () => {
    expect(nvidiaSmiRowMiB(rows, 'NVIDIA GeForce RTX 4090')).toBe(24564);
    expect(nvidiaSmiRowMiB(rows, 'nvidia a100-sxm4-80gb')).toBe(81920);
    expect(nvidiaSmiRowMiB(rows, 'nvidia-geforce-rtx-4090')).toBe(24564);
    expect(nvidiaSmiRowMiB(rows, 'Quadro P400')).toBe(81920);
    expect(nvidiaSmiRowMiB(rows)).toBe(81920);
    expect(nvidiaSmiRowMiB('')).toBeNull();
    expect(nvidiaSmiRowMiB('NVIDIA A100, [N/A]')).toBeNull();
  });

  test('detectCapacity asks nvidia-smi for the adapter by its name', async () => {
    const p = probes(24564);
    await detectCapacity({ isSoftware: false, vendor: 'nvidia', deviceName: 'NVIDIA GeForce RTX 4090', probes: p });
    expect(p.nvidiaSmiMiB).toHaveBeenCalledWith('NVIDIA GeForce RTX 4090');
  });
});
