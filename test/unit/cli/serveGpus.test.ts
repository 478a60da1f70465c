// Which GPUs `salus serve` opens and how big each is: dawn.node's adapter list, --gpus and --memory.
import { describe, expect, it } from 'vitest';
import { chooseAdapters } from '../../../core/cli/serveGpus.js';
import { parseAdapterList, type ListedAdapter } from '../../../core/platform/gpu.js';
import { normalizeGpuId, parseGpuMemory } from '../../../core/platform/gpuId.js';

const MiB = 1024 ** 2;
const adapter = (name: string, backend = 'vulkan'): ListedAdapter => ({ name, backend, isSoftware: /swiftshader|llvmpipe/i.test(name) });

describe('parseAdapterList', () => {
  it("reads dawn.node's list of adapters from its error message", () => {
    const message = "no suitable backends found\nAvailable adapters:\n * backend: 'vulkan', name: 'SwiftShader Twin 2 (Subzero)'\n * backend: 'vulkan', name: 'NVIDIA GeForce RTX 4090'\n";
    expect(parseAdapterList(message)).toEqual([
      { backend: 'vulkan', name: 'SwiftShader Twin 2 (Subzero)', isSoftware: true },
      { backend: 'vulkan', name: 'NVIDIA GeForce RTX 4090', isSoftware: false },
    ]);
    expect(parseAdapterList('no suitable backends found')).toEqual([]);
  });
});

describe('chooseAdapters', () => {
  const listed = [adapter('NVIDIA A100'), adapter('SwiftShader Device (Subzero)'), adapter('NVIDIA A100', 'opengl'), adapter('AMD MI50')];

  it('takes every hardware GPU by default (once each), and leaves the choice to Dawn where there is none', () => {
    expect(chooseAdapters(listed, undefined)?.map((a) => a.name)).toEqual(['NVIDIA A100', 'AMD MI50']);
    expect(chooseAdapters([adapter('SwiftShader Device (Subzero)'), adapter('SwiftShader Twin 2 (Subzero)')], undefined)).toBeNull();
  });

  it('keeps the Vulkan entry of a GPU Dawn lists under two backends', () => {
    expect(chooseAdapters([adapter('NVIDIA A100', 'opengl'), adapter('NVIDIA A100')], 'all')).toEqual([adapter('NVIDIA A100')]);
  });

  it('takes all, hardware, software, positions and parts of names', () => {
    expect(chooseAdapters(listed, 'all')?.map((a) => a.name)).toEqual(['NVIDIA A100', 'SwiftShader Device (Subzero)', 'AMD MI50']);
    expect(chooseAdapters(listed, 'software')?.map((a) => a.name)).toEqual(['SwiftShader Device (Subzero)']);
    expect(chooseAdapters(listed, '2,0')?.map((a) => a.name)).toEqual(['AMD MI50', 'NVIDIA A100']);
    expect(chooseAdapters(listed, 'amd, swift')?.map((a) => a.name)).toEqual(['AMD MI50', 'SwiftShader Device (Subzero)']);
    expect(() => chooseAdapters(listed, 'intel')).toThrow("--gpus: no adapter 'intel'; the adapters are 0: NVIDIA A100 (vulkan), 1: SwiftShader Device (Subzero) (vulkan), 2: AMD MI50 (vulkan)");
  });
});

describe('parseGpuMemory and normalizeGpuId', () => {
  it('reads one size for every GPU, or sizes by GPU id, or both', () => {
    expect(parseGpuMemory('64MiB')).toEqual({ eachBytes: 64 * MiB, byGpu: {} });
    expect(parseGpuMemory('gpu0=64MiB,1=32MiB')).toEqual({ byGpu: { gpu0: 64 * MiB, gpu1: 32 * MiB } });
    expect(parseGpuMemory('4GiB, gpu1=2GiB')).toEqual({ eachBytes: 4 * 1024 * MiB, byGpu: { gpu1: 2 * 1024 * MiB } });
    expect(() => parseGpuMemory('gpuX=1GiB')).toThrow("'gpuX' is not a GPU id");
    expect(() => parseGpuMemory('gpu1=lots')).toThrow('invalid size');
    expect(() => parseGpuMemory(',')).toThrow('invalid size');
  });

  it('takes gpu1 and 1 as the same GPU', () => {
    expect(normalizeGpuId('1')).toBe('gpu1');
    expect(normalizeGpuId('GPU12')).toBe('gpu12');
    expect(() => normalizeGpuId('first')).toThrow('is not a GPU id');
  });
});
