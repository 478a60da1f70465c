/**
 * A real WebGPU device (SwiftShader here) for one test file: opened before its
 * first test, destroyed after its last. The `GPU` object is held as long: once
 * Dawn's instance is garbage-collected, pending mapAsync calls crash the process
 * (in InstanceBase::ProcessEvents), which is why tests do not use openGpu().
 */
import { afterAll, beforeAll } from 'vitest';
import { localNavigatorGpu } from '../../core/platform/gpu.js';

/** The file's adapter and device (read them inside tests and hooks). */
export interface FileDevice {
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
}

/** Registers the file's hooks; call once at the top level. `features` picks, from the adapter's, those to require. */
export function useFileDevice(label: string, features: (adapter: GPUAdapter) => GPUFeatureName[] = () => []): FileDevice {
  let gpu: GPU | undefined;
  let adapter: GPUAdapter | undefined;
  let device: GPUDevice | undefined;
  beforeAll(async () => {
    gpu = await localNavigatorGpu();
    adapter = (await gpu.requestAdapter()) ?? undefined;
    if (!adapter) throw new Error('no WebGPU adapter (install chromium for SwiftShader)');
    device = await adapter.requestDevice({ label, requiredFeatures: features(adapter) });
  });
  afterAll(() => device?.destroy());
  return {
    get adapter() { return adapter!; },
    get device() { return device!; },
  };
}
