// Knob validation and parsing: what `salus policy --set` and the sliders rely on.
import { describe, expect, it } from 'vitest';
import { POLICY_NAMES } from '../../../core/protocol/state.js';
import { createFakeClock } from '../../../core/scheduler/clock.js';
import { parseKnobValue } from '../../../core/scheduler/params.js';
import { getPolicy, POLICIES } from '../../../core/scheduler/policies/registry.js';
import { createScheduler } from '../../../core/scheduler/scheduler.js';

function scheduler() {
  return createScheduler({ clock: createFakeClock(), policy: 'SRTF' });
}

describe('setParams', () => {
  it('rejects an unknown key, listing the valid knobs and their ranges', () => {
    expect(() => scheduler().setParams({ hold: 5 })).toThrow(
      'Unknown knob "hold" for SRTF; valid knobs: workConserving (true|false), holdMs (number 0..10000 ms, whole numbers), ' +
        'maxLanes (number 1..64 lanes, whole numbers), hangFactor (number 0..1000 ×, whole numbers), ' +
        'hangMinMs (number 1000..3600000 ms, whole numbers), probeFirst (true|false), defaultIterationMs (number 1..60000 ms, whole numbers)',
    );
  });

  it('rejects values out of range, of the wrong type, or not whole where whole is needed', () => {
    const s = scheduler();
    expect(() => s.setParams({ holdMs: -1 })).toThrow('SRTF knob holdMs: -1 is below 0; expected holdMs (number 0..10000 ms, whole numbers)');
    expect(() => s.setParams({ holdMs: 20_000 })).toThrow(/20000 is above 10000/);
    expect(() => s.setParams({ holdMs: Number.NaN })).toThrow(/not a finite number/);
    expect(() => s.setParams({ workConserving: 1 })).toThrow(/1 is not a boolean; expected workConserving \(true\|false\)/);
    expect(() => s.setParams({ maxLanes: 1.5 })).toThrow(/1.5 is not a whole number/);
  });

  it('changes nothing when any key is bad', () => {
    const s = scheduler();
    const before = s.policyInfo();
    expect(() => s.setParams({ holdMs: 100, nope: true })).toThrow(/Unknown knob "nope"/);
    expect(s.policyInfo()).toEqual(before);
    expect(s.setParams({ holdMs: 100, workConserving: true }).params).toMatchObject({ holdMs: 100, workConserving: true });
  });

  it('rejects bad knobs and unknown names in setPolicy and at creation', () => {
    const s = scheduler();
    expect(() => s.setPolicy('PRIORITY', { agingPerSecond: -0.5 })).toThrow(/agingPerSecond: -0.5 is below 0/);
    expect(s.policyInfo().name).toBe('SRTF');
    expect(() => s.setPolicy('LOTTERY' as never)).toThrow('Unknown policy "LOTTERY"; valid policies: FIFO, SRTF, PACK, FAIR, PRIORITY');
    expect(() => createScheduler({ policy: 'FIFO', params: { agingPerSecond: 1 } })).toThrow(/Unknown knob "agingPerSecond" for FIFO/);
  });
});

describe('policies and their knobs', () => {
  it('has a registered policy for every name, whose defaults cover exactly its knobs and pass validation', () => {
    for (const name of POLICY_NAMES) {
      const policy = POLICIES[name];
      expect(policy.name).toBe(name);
      expect(Object.keys(policy.defaults).sort()).toEqual(policy.knobs.map((k) => k.key).sort());
      for (const knob of policy.knobs) expect(knob.description.length).toBeGreaterThan(10);
      const s = createScheduler({ clock: createFakeClock(), policy: name });
      expect(s.setParams({ ...policy.defaults }).params).toEqual(policy.defaults);
    }
  });

  it('makes FIFO, SRTF and PRIORITY strict with one lane, FAIR strict with a short hold, PACK work-conserving with many lanes', () => {
    for (const name of ['FIFO', 'SRTF', 'PRIORITY'] as const) {
      expect(POLICIES[name].defaults).toMatchObject({ workConserving: false, holdMs: 250, maxLanes: 1 });
    }
    expect(POLICIES.FAIR.defaults).toMatchObject({ workConserving: false, holdMs: 50, maxLanes: 1 });
    expect(POLICIES.PACK.defaults).toMatchObject({ workConserving: true, maxLanes: 16 });
  });

  it('finds policies case-insensitively', () => {
    expect(getPolicy('srtf')).toBe(POLICIES.SRTF);
  });
});

describe('parseKnobValue', () => {
  it('parses numbers and the usual spellings of booleans', () => {
    const srtf = POLICIES.SRTF;
    expect(parseKnobValue(srtf, 'holdMs', ' 120 ')).toBe(120);
    expect(parseKnobValue(srtf, 'workConserving', 'on')).toBe(true);
    expect(parseKnobValue(srtf, 'workConserving', 'False')).toBe(false);
    expect(() => parseKnobValue(srtf, 'holdMs', 'soon')).toThrow(/"soon" is not a number/);
    expect(() => parseKnobValue(srtf, 'holdMs', '')).toThrow(/is not a number/);
    expect(() => parseKnobValue(srtf, 'workConserving', 'maybe')).toThrow(/not a boolean/);
    expect(() => parseKnobValue(srtf, 'speed', '1')).toThrow(/Unknown knob "speed" for SRTF/);
  });
});
