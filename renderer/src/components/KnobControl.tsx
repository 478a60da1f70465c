/**
 * One policy knob: a slider for numbers, a switch for booleans, each with its
 * name, its value and unit, and the scheduler's line saying what it does.
 */
import { useId, type CSSProperties, type KeyboardEvent, type ReactElement } from 'react';
import type { PolicyKnob, PolicyParamValue } from '../../../core/protocol/state.js';

/** `laneGrowthPercent` → `"Lane growth percent"`. */
export function knobLabel(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Decimals to show for values on a grid of `step`. */
function decimals(step: number): number {
  const text = String(step);
  return text.includes('.') ? text.length - text.indexOf('.') - 1 : 0;
}

/** `"25 %"`, `"2 lanes"`, `"1.5 /min"`. */
export function formatKnobValue(value: number, knob: PolicyKnob): string {
  const shown = value.toFixed(decimals(knob.step ?? 1));
  return knob.unit ? `${shown} ${knob.unit}` : shown;
}

/**
 * The value a key press moves a slider to: arrows by one step (ten with
 * Shift), Page Up/Down by a tenth of the range, Home/End to the ends. Null for
 * other keys. Handled here rather than left to the browser so every press is
 * one clamped, step-aligned change, the same in every engine.
 */
export function nextSliderValue(key: string, shiftKey: boolean, value: number, min: number, max: number, step: number): number | null {
  const page = Math.max(step, Math.round((max - min) / 10 / step) * step);
  const by = shiftKey ? step * 10 : step;
  let next: number;
  switch (key) {
    case 'ArrowRight': case 'ArrowUp': next = value + by; break;
    case 'ArrowLeft': case 'ArrowDown': next = value - by; break;
    case 'PageUp': next = value + page; break;
    case 'PageDown': next = value - page; break;
    case 'Home': next = min; break;
    case 'End': next = max; break;
    default: return null;
  }
  const aligned = min + Math.round((next - min) / step) * step;
  return Number(Math.min(max, Math.max(min, aligned)).toFixed(decimals(step)));
}

/** A knob, its current value, and where changes go. */
export interface KnobControlProps {
  knob: PolicyKnob;
  value: PolicyParamValue | undefined;
  onChange(key: string, value: PolicyParamValue): void;
}

/** A labelled slider or switch for `knob`, calling `onChange` with each new value. */
export function KnobControl({ knob, value, onChange }: KnobControlProps): ReactElement {
  const id = useId();
  const label = knobLabel(knob.key);

  if (knob.kind === 'boolean') {
    const on = value === true;
    return (
      <div className="knob knob-switch">
        <div className="knob-head">
          <span id={`${id}-label`} className="knob-name">{label}</span>
          <button
            type="button"
            role="switch"
            aria-checked={on}
            aria-labelledby={`${id}-label`}
            aria-describedby={`${id}-description`}
            className="switch"
            onClick={() => onChange(knob.key, !on)}
          >
            <span className="switch-thumb" aria-hidden="true" />
          </button>
        </div>
        <p id={`${id}-description`} className="knob-description">{knob.description}</p>
      </div>
    );
  }

  const min = knob.min ?? 0;
  const max = knob.max ?? 100;
  const step = knob.step ?? 1;
  const current = typeof value === 'number' ? value : min;
  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    const next = nextSliderValue(event.key, event.shiftKey, current, min, max, step);
    if (next === null) return;
    event.preventDefault();
    if (next !== current) onChange(knob.key, next);
  };

  return (
    <div className="knob">
      <div className="knob-head">
        <label htmlFor={id} className="knob-name">{label}</label>
        <output htmlFor={id} className="knob-value">{formatKnobValue(current, knob)}</output>
      </div>
      <input
        id={id}
        type="range"
        min={min}
        max={max}
        step={step}
        value={current}
        aria-valuetext={formatKnobValue(current, knob)}
        aria-describedby={`${id}-description`}
        title={`${formatKnobValue(min, knob)} to ${formatKnobValue(max, knob)}`}
        style={{ '--fill': `${((current - min) / Math.max(max - min, Number.EPSILON)) * 100}%` } as CSSProperties}
        onKeyDown={onKeyDown}
        onChange={(event) => {
          const next = Number(event.target.value);
          if (next !== current) onChange(knob.key, next);
        }}
      />
      <p id={`${id}-description`} className="knob-description">{knob.description}</p>
    </div>
  );
}
