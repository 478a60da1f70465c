/**
 * What the service says about itself and its memory and policy: the GPU, the
 * memory map, the policy with its knobs, and the latest busy share. Each part is
 * replaced whole by its event; knob changes are shown at once (optimistically)
 * and then confirmed or corrected by the service's answer. While changes are on
 * their way, the service's policy events (which may echo an older change) show
 * the values the hand set, so a slider never jumps back between key presses.
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
  /** Knob values set here that the service has not answered yet (null: none on their way). */
  pendingParams: Record<string, PolicyParamValue> | null;
  applyPolicy(policy: PolicyInfo): void;
  /** Shows knob values before the service confirms them, so sliders follow the hand. */
  setParamsLocally(params: Record<string, PolicyParamValue>): void;
  /** Every change was answered: the service's policy is shown as it is from now on. */
  settleParams(): void;
}

/** `policy` with the knob values still on their way shown over it (only knobs it has). */
export function withPendingParams(policy: PolicyInfo | null, pending: Record<string, PolicyParamValue> | null): PolicyInfo | null {
  if (!policy || !pending) return policy;
  const shown = Object.fromEntries(Object.entries(pending).filter(([key]) => Object.hasOwn(policy.params, key)));
  return { ...policy, params: { ...policy.params, ...shown } };
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
  pendingParams: null,
  applyMemory(memory) {
    set({ memory });
  },
  applyPolicy(policy) {
    set({ policy: withPendingParams(policy, get().pendingParams) });
  },
  setParamsLocally(params) {
    const { policy, pendingParams } = get();
    if (!policy) return;
    const pending = { ...pendingParams, ...params };
    set({ pendingParams: pending, policy: withPendingParams(policy, pending) });
  },
  settleParams() {
    set({ pendingParams: null });
  },
});
