/**
 * What the service says about itself and its memory and policy: the GPU, the
 * memory map, the policy with its knobs, and the latest busy share. Each part is
 * replaced whole by its event; knob changes are shown at once (optimistically)
 * and then confirmed or corrected by the service's answer.
 */
import type { StateCreator } from 'zustand';
import type { GpuInfo, MemoryMap, PolicyInfo, PolicyParamValue } from '../../../core/protocol/state.js';
import type { PanelState } from './panelStore.js';

/** GPU, memory map, policy and busy share, as the service last reported them. */
export interface ServiceSlice {
  /** The service's version, from the last snapshot. */
  version: string | null;
  gpu: GpuInfo | null;
  memory: MemoryMap | null;
  policy: PolicyInfo | null;
  /** Share of the last metrics window during which some lane ran, 0..1. */
  busyShare: number;
  /** The same for each GPU, by id (`gpu0`: …). */
  busyShareByGpu: Record<string, number>;
  /** When the last snapshot was taken (service clock, epoch ms). */
  snapshotAt: number | null;
  applyMemory(memory: MemoryMap): void;
  applyPolicy(policy: PolicyInfo): void;
  /** Shows knob values before the service confirms them, so sliders follow the hand. */
  setParamsLocally(params: Record<string, PolicyParamValue>): void;
}

/** The service slice, empty until the first snapshot. */
export const createServiceSlice: StateCreator<PanelState, [], [], ServiceSlice> = (set, get) => ({
  version: null,
  gpu: null,
  memory: null,
  policy: null,
  busyShare: 0,
  busyShareByGpu: {},
  snapshotAt: null,
  applyMemory(memory) {
    set({ memory });
  },
  applyPolicy(policy) {
    set({ policy });
  },
  setParamsLocally(params) {
    const { policy } = get();
    if (!policy) return;
    set({ policy: { ...policy, params: { ...policy.params, ...params } } });
  },
});
