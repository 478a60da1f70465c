/**
 * Small controls shared by the job queue and the drawer: the state badge, the
 * priority field and the pause/resume/kill buttons.
 */
import { useEffect, useState, type ReactElement } from 'react';
import type { GpuErrorTally, JobInfo, JobState } from '../../../core/protocol/state.js';
import { isActive } from '../store/jobView.js';
import { useCommands } from '../store/hooks.js';
import { PauseIcon, PlayIcon, StopIcon } from './icons.js';

/** A job's state as a coloured pill; `live` adds a pulse while its iteration runs in its lane; a warning pill counts uncaptured GPU errors. */
export function StateBadge({ state, live = false, gpuErrors }: { state: JobState; live?: boolean; gpuErrors?: GpuErrorTally }): ReactElement {
  const count = gpuErrors?.count ?? 0;
  return (
    <span className="badge-group">
      <span className={`badge badge-${state}`}>
        {live ? <span className="badge-pulse" aria-hidden="true" /> : null}
        {state}
        {live ? <span className="visually-hidden"> (iterating now)</span> : null}
      </span>
      {count > 0 ? (
        // Uncaptured GPU errors: the job's program never saw them, so even a `done` result may be wrong.
        <span className="badge badge-gpu-errors" role="img" aria-label={`${count} uncaptured GPU error${count === 1 ? '' : 's'}`} title={gpuErrors?.first ? `${gpuErrors.first.type}: ${gpuErrors.first.message}` : undefined}>
          ⚠ {count}
        </span>
      ) : null}
    </span>
  );
}

/**
 * A job's number, editable while the job is active: sent (when `valid` and changed) on Enter or blur,
 * reverted by Escape; a plain figure once the job has ended.
 */
function JobNumberInput({ value, label, step, valid, onCommit }: {
  value: number;
  label: string;
  step: number | 'any';
  valid: (value: number) => boolean;
  onCommit: (value: number) => void;
}): ReactElement {
  const [draft, setDraft] = useState<string | null>(null);
  const shown = draft ?? String(value);

  const commit = () => {
    if (draft === null) return;
    const next = Number(draft);
    setDraft(null);
    if (draft.trim() !== '' && valid(next) && next !== value) onCommit(next);
  };

  return (
    <input
      className="priority-input"
      type="number"
      step={step}
      inputMode={step === 1 ? 'numeric' : 'decimal'}
      aria-label={label}
      value={shown}
      onChange={(event) => setDraft(event.target.value)}
      onBlur={commit}
      onKeyDown={(event) => {
        if (event.key === 'Enter') commit();
        if (event.key === 'Escape') setDraft(null);
      }}
    />
  );
}

/** The job's priority as an editable whole number; sent on Enter or blur, reverted by Escape. */
export function PriorityInput({ job }: { job: JobInfo }): ReactElement {
  const commands = useCommands();
  if (!isActive(job)) return <span className="priority-fixed">{job.priority}</span>;
  return (
    <JobNumberInput
      value={job.priority} label={`Priority of ${job.name}`} step={1}
      valid={Number.isInteger} onCommit={(value) => void commands.setPriority(job.id, value)}
    />
  );
}

/** The job's share of GPU time under FAIR, editable while it is active (a number above 0). */
export function ShareInput({ job }: { job: JobInfo }): ReactElement {
  const commands = useCommands();
  const share = job.share ?? 1;
  if (!isActive(job)) return <span className="priority-fixed">{share}</span>;
  return (
    <JobNumberInput
      value={share} label={`GPU share of ${job.name}`} step="any"
      valid={(value) => Number.isFinite(value) && value > 0 && value <= 1e6} onCommit={(value) => void commands.setShare(job.id, value)}
    />
  );
}

/** How long the Kill button stays armed for its confirming second press. */
const KILL_CONFIRM_MS = 4000;

/**
 * A Kill button that takes two presses (the first arms it for a few seconds),
 * since a kill cannot be undone. `name` labels it for screen readers.
 */
export function KillButton({ name, onKill, withLabel = false }: { name: string; onKill: () => void; withLabel?: boolean }): ReactElement {
  const [armed, setArmed] = useState(false);

  useEffect(() => {
    if (!armed) return;
    const timer = setTimeout(() => setArmed(false), KILL_CONFIRM_MS);
    return () => clearTimeout(timer);
  }, [armed]);

  return (
    <button
      type="button"
      className={`icon-button danger${armed ? ' armed' : ''}`}
      aria-label={armed ? `Confirm: kill ${name}` : `Kill ${name}`}
      title={armed ? 'Press again to kill' : 'Kill'}
      onBlur={() => setArmed(false)}
      onClick={() => {
        if (!armed) {
          setArmed(true);
          return;
        }
        setArmed(false);
        onKill();
      }}
    >
      <StopIcon />{armed ? <span>Kill?</span> : withLabel ? <span>Kill</span> : null}
    </button>
  );
}

/** Pause or resume, and kill (see KillButton), for a job that can still run. */
export function JobActions({ job, withLabels = false }: { job: JobInfo; withLabels?: boolean }): ReactElement | null {
  const commands = useCommands();
  if (!isActive(job)) return null;
  const canPause = job.state === 'running' || job.state === 'queued';
  return (
    <div className="job-actions">
      {canPause ? (
        <button type="button" className="icon-button" aria-label={`Pause ${job.name}`} title="Pause" onClick={() => void commands.pauseJob(job.id)}>
          <PauseIcon />{withLabels ? <span>Pause</span> : null}
        </button>
      ) : (
        <button type="button" className="icon-button" aria-label={`Resume ${job.name}`} title="Resume" onClick={() => void commands.resumeJob(job.id)}>
          <PlayIcon />{withLabels ? <span>Resume</span> : null}
        </button>
      )}
      <KillButton name={job.name} withLabel={withLabels} onKill={() => void commands.killJob(job.id)} />
    </div>
  );
}
