/**
 * The policy panel: the five scheduling policies as a radio group, each with a
 * line saying how it chooses, and the current policy's knobs. Changes apply
 * live; the queue and the memory map show their effect as the service reports it.
 */
import { useCallback, useId, useState, type ReactElement } from 'react';
import { POLICY_NAMES, type PolicyName, type PolicyParamValue } from '../../../core/protocol/state.js';
import { useCommands, usePanel } from '../store/hooks.js';
import { KnobControl } from './KnobControl.js';

/** What each policy does, in one line, as core/scheduler/policies/ implements it (after Salus §4). */
export const POLICY_LINES: Record<PolicyName, string> = {
  FIFO: 'The oldest job runs until it is done.',
  SRTF: 'The job with the least time left runs next.',
  PACK: 'Lanes side by side, arrival order in each.',
  FAIR: 'The job with the least GPU time runs next.',
  PRIORITY: 'Highest priority first, aged by waiting.',
};

/** The policy card; the radio group is disabled until the policy is known. */
export function PolicyPanel(): ReactElement {
  const policy = usePanel((state) => state.policy);
  const commands = useCommands();
  const groupName = useId();
  // The policy picked but not yet confirmed: shown checked at once, as a radio
  // should be, and dropped when the service answers (the store then has it) or refuses.
  const [picked, setPicked] = useState<PolicyName | null>(null);
  const shown = picked ?? policy?.name;
  const pick = (name: PolicyName) => {
    setPicked(name);
    void commands.setPolicy(name).finally(() => setPicked((current) => (current === name ? null : current)));
  };
  const onKnob = useCallback(
    (key: string, value: PolicyParamValue) => void commands.setPolicyParams({ [key]: value }),
    [commands],
  );

  return (
    <section className="card policy-card" aria-labelledby="policy-title">
      <header className="card-header"><h2 id="policy-title">Scheduling policy</h2></header>
      <div role="radiogroup" aria-labelledby="policy-title" className="policy-options">
        {POLICY_NAMES.map((name) => (
          <label key={name} className={`policy-option${shown === name ? ' checked' : ''}`}>
            <input
              type="radio"
              name={groupName}
              value={name}
              checked={shown === name}
              disabled={!policy}
              onChange={() => pick(name)}
            />
            <span className="policy-name">{name}</span>
            <span className="policy-line">{POLICY_LINES[name]}</span>
          </label>
        ))}
      </div>
      {policy && policy.knobs.length > 0 ? (
        <div className="knobs" role="group" aria-label={`${policy.name} settings`}>
          {policy.knobs.map((knob) => (
            <KnobControl key={knob.key} knob={knob} value={policy.params[knob.key]} onChange={onKnob} />
          ))}
        </div>
      ) : policy ? <p className="muted knobs-empty">{policy.name} has no settings.</p> : null}
    </section>
  );
}
