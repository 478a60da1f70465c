/**
 * Checking and parsing knob values against a policy's `PolicyKnob` list, for
 * `Scheduler.setParams`, `salus policy --set KEY=VALUE` and the panel's sliders.
 */
import type { PolicyKnob, PolicyParamValue } from '../protocol/state.js';
import type { Policy, PolicyParams } from './policy.js';

/** A knob in one line, e.g. `holdMs (number 0..10000 ms)` or `workConserving (true|false)`. */
export function describeKnob(knob: PolicyKnob): string {
  if (knob.kind === 'boolean') return `${knob.key} (true|false)`;
  const range = `${knob.min ?? '-inf'}..${knob.max ?? 'inf'}`;
  const whole = isWholeStep(knob) ? ', whole numbers' : '';
  return `${knob.key} (number ${range}${knob.unit ? ` ${knob.unit}` : ''}${whole})`;
}

/** What a knob check needs to know of a policy: its name and knobs (a `Policy` or the `PolicyInfo` a client sees). */
interface KnobOwner {
  readonly name: string;
  readonly knobs: readonly PolicyKnob[];
}

function describeKnobs(policy: KnobOwner): string {
  return policy.knobs.map(describeKnob).join(', ');
}

/** Knobs stepped by whole numbers (e.g. `maxLanes`) take whole numbers only; finer steps are for sliders. */
function isWholeStep(knob: PolicyKnob): boolean {
  return knob.step !== undefined && Number.isInteger(knob.step) && knob.step >= 1;
}

function checkValue(policy: Policy, knob: PolicyKnob, value: unknown): PolicyParamValue {
  const problem = (why: string) =>
    new Error(`${policy.name} knob ${knob.key}: ${why}; expected ${describeKnob(knob)}`);
  if (knob.kind === 'boolean') {
    if (typeof value !== 'boolean') throw problem(`${JSON.stringify(value)} is not a boolean`);
    return value;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) throw problem(`${JSON.stringify(value)} is not a finite number`);
  if (knob.min !== undefined && value < knob.min) throw problem(`${value} is below ${knob.min}`);
  if (knob.max !== undefined && value > knob.max) throw problem(`${value} is above ${knob.max}`);
  if (isWholeStep(knob) && !Number.isInteger(value)) throw problem(`${value} is not a whole number`);
  return value;
}

/**
 * `base` with `changes` applied, after checking every change against `policy.knobs`.
 * Throws an Error naming the bad key or value and listing the valid knobs and ranges;
 * nothing is applied then.
 */
export function applyParams(policy: Policy, base: PolicyParams, changes: Readonly<Record<string, unknown>>): Record<string, PolicyParamValue> {
  const next: Record<string, PolicyParamValue> = { ...base };
  for (const [key, value] of Object.entries(changes)) {
    const knob = policy.knobs.find((k) => k.key === key);
    if (!knob) throw new Error(`Unknown knob "${key}" for ${policy.name}; valid knobs: ${describeKnobs(policy)}`);
    next[key] = checkValue(policy, knob, value);
  }
  return next;
}

/**
 * Parses the text a user typed for a knob (`salus policy --set holdMs=100`,
 * `workConserving=on`) into its value; range checks are `applyParams`' job.
 */
export function parseKnobValue(policy: KnobOwner, key: string, text: string): PolicyParamValue {
  const knob = policy.knobs.find((k) => k.key === key);
  if (!knob) throw new Error(`Unknown knob "${key}" for ${policy.name}; valid knobs: ${describeKnobs(policy)}`);
  const t = text.trim().toLowerCase();
  if (knob.kind === 'boolean') {
    if (['true', 'on', 'yes', '1'].includes(t)) return true;
    if (['false', 'off', 'no', '0'].includes(t)) return false;
    throw new Error(`${policy.name} knob ${key}: "${text}" is not a boolean; expected ${describeKnob(knob)}`);
  }
  const value = t === '' ? NaN : Number(t);
  if (!Number.isFinite(value)) throw new Error(`${policy.name} knob ${key}: "${text}" is not a number; expected ${describeKnob(knob)}`);
  return value;
}
