// The call table (core/protocol/calls.ts): one schema per call, used by every
// host, so the service's socket, the bridge and Electron's IPC accept and
// refuse the same arguments. Where the hosts once disagreed, what a user
// expects is what the table says.
import { describe, expect, it } from 'vitest';
import { CALL_NAMES, CONTROL_CALLS, PANEL_CALL_NAMES, isCallName } from '../../../core/protocol/calls.js';
import { BRIDGE_METHODS } from '../../../core/protocol/bridge.js';

const accepts = (name: keyof typeof CONTROL_CALLS, args: unknown[]) => CONTROL_CALLS[name].params.safeParse(args).success;

describe('the call table', () => {
  it('names every call once; the panel calls are the bridge methods', () => {
    expect(new Set(CALL_NAMES).size).toBe(CALL_NAMES.length);
    expect(BRIDGE_METHODS).toEqual(PANEL_CALL_NAMES);
    expect(PANEL_CALL_NAMES).toContain('launchJob');
    expect(PANEL_CALL_NAMES).not.toContain('reportExit');
    expect(isCallName('history')).toBe(true);
    expect(isCallName('toString')).toBe(false);
  });

  it('takes policy names in any case, as a person types them', () => {
    expect(CONTROL_CALLS.setPolicy.params.parse(['fair'])).toEqual(['FAIR']);
    expect(CONTROL_CALLS.setPolicy.params.parse(['Srtf', { holdMs: 5 }])).toEqual(['SRTF', { holdMs: 5 }]);
    const bogus = CONTROL_CALLS.setPolicy.params.safeParse(['lottery']);
    expect(bogus.success).toBe(false);
    expect(bogus.error?.issues[0].message).toBe("unknown policy 'lottery': one of FIFO, SRTF, PACK, FAIR, PRIORITY");
  });

  it('bounds priorities to ±1e6 and shares to above 0, and refuses non-finite ones', () => {
    expect(accepts('setPriority', ['job-1', 1e6])).toBe(true);
    expect(accepts('setPriority', ['job-1', -1e6])).toBe(true);
    expect(accepts('setPriority', ['job-1', 1e6 + 1])).toBe(false);
    expect(accepts('setShare', ['job-1', 0.5])).toBe(true);
    expect(accepts('setShare', ['job-1', 0])).toBe(false);
    expect(accepts('setShare', ['job-1', Number.POSITIVE_INFINITY])).toBe(false);
    expect(accepts('setPriority', ['job-1', Number.NaN])).toBe(false);
    expect(accepts('setPriority', ['job-1', Infinity])).toBe(false);
  });

  it('refuses a launch request with a field it does not know (a typo is not silently ignored)', () => {
    expect(accepts('launchJob', [{ file: '/jobs/train.js', hints: { iterations: 3 } }])).toBe(true);
    expect(accepts('launchJob', [{ file: '/jobs/train.js', iterations: 3 }])).toBe(false);
    expect(accepts('launchJob', [{ file: '/jobs/\0train.js' }])).toBe(false);
  });

  it('takes knobs as numbers or booleans, at most 64 of them', () => {
    expect(accepts('setPolicyParams', [{ holdMs: 10, preempt: true }])).toBe(true);
    expect(accepts('setPolicyParams', [{ holdMs: 'soon' }])).toBe(false);
    expect(accepts('setPolicyParams', [Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i]))])).toBe(false);
  });

  it('takes uploaded job files by name only, ending in .js or .mjs', () => {
    expect(accepts('uploadJob', ['train.mjs', 'export {}'])).toBe(true);
    expect(accepts('uploadJob', ['../../.bashrc.js', 'x'])).toBe(false);
    expect(accepts('uploadJob', ['notes.txt', 'x'])).toBe(false);
  });
});
