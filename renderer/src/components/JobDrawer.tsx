/**
 * The detail drawer for the selected job: every field of its `JobInfo`, its
 * error in full, and its output (loaded with `jobOutput`, then followed live).
 * It is a non-modal side panel: the queue stays usable; Escape closes it.
 */
import { useEffect, useLayoutEffect, useRef, type ReactElement, type ReactNode } from 'react';
import { jobColor } from '../colors.js';
import { formatBytes, formatBytesExact, formatClock, formatCount, formatDuration, formatIterationMs } from '../format.js';
import { etaMs, progressShare, shownIterations } from '../store/jobView.js';
import { useCommands, usePanel } from '../store/hooks.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import { CloseIcon, RefreshIcon } from './icons.js';
import { JobActions, PriorityInput, ShareInput, StateBadge } from './JobControls.js';

function Field({ label, children, title }: { label: string; children: ReactNode; title?: string }): ReactElement {
  return (
    <div className="field" title={title}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A measured byte count, rounded with the exact figure beside it; '—' where the service did not say. */
function BytesField({ label, bytes }: { label: string; bytes: number | undefined }): ReactElement {
  if (bytes === undefined) return <Field label={label}>—</Field>;
  return (
    <Field label={label} title={formatBytesExact(bytes)}>
      {formatBytes(bytes)} <span className="muted exact">{formatBytesExact(bytes)}</span>
    </Field>
  );
}

function Details({ job }: { job: JobInfo }): ReactElement {
  const share = progressShare(job);
  const { done, total } = shownIterations(job);
  return (
    <dl className="details">
      <Field label="Iterations">
        {total === null ? `${formatCount(done)} (total unknown)` : `${formatCount(done)} / ${formatCount(total)}`}
        {share !== null ? <span className="muted"> · {(share * 100).toFixed(1)}%</span> : null}
      </Field>
      <Field label="ETA">{formatDuration(etaMs(job))}</Field>
      <Field label="GPU share">
        <ShareInput job={job} />
        {job.attainedFraction != null ? <span className="muted"> · {(job.attainedFraction * 100).toFixed(1)}% of live jobs' GPU time</span> : null}
      </Field>
      <Field label="Average iteration">{formatIterationMs(job.avgIterationMs)}</Field>
      <Field label="Iterations marked by">{job.iterationSource === 'sdk' ? 'the job (SDK)' : 'sync points (inferred)'}</Field>
      <Field label="Persistent memory" title={formatBytesExact(job.memory.persistentBytes)}>
        {formatBytes(job.memory.persistentBytes)} <span className="muted exact">{formatBytesExact(job.memory.persistentBytes)}</span>
      </Field>
      <Field label="Ephemeral peak" title={formatBytesExact(job.memory.ephemeralPeakBytes)}>
        {formatBytes(job.memory.ephemeralPeakBytes)} <span className="muted exact">{formatBytesExact(job.memory.ephemeralPeakBytes)}</span>
      </Field>
      <BytesField label="State between iterations" bytes={job.memory.stateBytes} />
      <BytesField label="Paged out to host memory" bytes={job.memory.pagedOutBytes} />
      <BytesField label="Working set (last iteration)" bytes={job.memory.workingSetBytes} />
      <BytesField label="Of it, live-in" bytes={job.memory.liveInBytes} />
      <Field label="Lane">{job.lane ?? '—'}</Field>
      <Field label="GPU time">{formatDuration(job.attainedMs)}</Field>
      <Field label="Time waiting">{formatDuration(job.queuedMs)}</Field>
      <Field label="Submitted">{formatClock(job.submittedAt)}</Field>
      <Field label="Started">{formatClock(job.startedAt)}</Field>
      <Field label="Finished">{formatClock(job.finishedAt)}</Field>
      <Field label="Process">{job.pid ?? '—'}</Field>
    </dl>
  );
}

function Output({ jobId }: { jobId: string }): ReactElement {
  const output = usePanel((state) => (state.output?.jobId === jobId ? state.output : null));
  const commands = useCommands();
  const preRef = useRef<HTMLPreElement>(null);
  const stickToBottom = useRef(true);

  useEffect(() => {
    void commands.loadOutput(jobId);
  }, [commands, jobId]);

  // Follow new output only while the reader is at the bottom, like a terminal.
  useLayoutEffect(() => {
    const pre = preRef.current;
    if (pre && stickToBottom.current) pre.scrollTop = pre.scrollHeight;
  }, [output?.text]);

  return (
    <section className="drawer-section output" aria-labelledby="output-title">
      <div className="section-header">
        <h3 id="output-title">Output</h3>
        <button type="button" className="icon-button" aria-label="Reload output" title="Reload output" onClick={() => void commands.loadOutput(jobId)}>
          <RefreshIcon />
        </button>
      </div>
      {output?.error ? <p className="inline-error" role="alert">Could not load the output: {output.error}</p> : null}
      <pre
        ref={preRef}
        className="output-text"
        tabIndex={0}
        aria-label="Job output"
        aria-busy={output?.loading ?? true}
        onScroll={(event) => {
          const pre = event.currentTarget;
          stickToBottom.current = pre.scrollHeight - pre.scrollTop - pre.clientHeight < 24;
        }}
      >
        {output?.loading ? 'Loading output…' : output?.text || 'No output yet.'}
      </pre>
    </section>
  );
}

/** The drawer; renders nothing while no job is selected. */
export function JobDrawer(): ReactElement | null {
  const jobId = usePanel((state) => state.selectedJobId);
  const job = usePanel((state) => (state.selectedJobId ? state.jobsById[state.selectedJobId] : undefined));
  const live = usePanel((state) => state.memory?.lanes.some((lane) => lane.running === jobId) ?? false);
  const selectJob = usePanel((state) => state.selectJob);
  const closeRef = useRef<HTMLButtonElement>(null);
  const returnFocusRef = useRef<HTMLElement | null>(null);

  // Focus moves into the drawer when it opens and back to where it came from
  // when it closes (if that control is still on screen: rows are virtualized).
  useEffect(() => {
    if (!jobId) return;
    const active = document.activeElement as HTMLElement | null;
    if (active && !active.closest('.drawer')) returnFocusRef.current = active;
    closeRef.current?.focus();
    return () => {
      const target = returnFocusRef.current;
      if (target?.isConnected && !document.querySelector('.drawer')) target.focus();
    };
  }, [jobId]);

  if (!jobId) return null;
  return (
    <aside
      className="drawer"
      aria-labelledby="drawer-title"
      onKeyDown={(event) => {
        if (event.key === 'Escape') selectJob(null);
      }}
    >
      <header className="drawer-header" style={{ borderTopColor: jobColor(jobId) }}>
        <div className="drawer-title-row">
          {job ? <StateBadge state={job.state} live={live && job.state === 'running'} gpuErrors={job.gpuErrors} /> : null}
          <h2 id="drawer-title">{job?.name ?? jobId}</h2>
          <button ref={closeRef} type="button" className="icon-button" aria-label="Close details" title="Close (Esc)" onClick={() => selectJob(null)}>
            <CloseIcon />
          </button>
        </div>
        <div className="drawer-subtitle muted">job {jobId}{job?.fromEarlierRun ? ` · from an earlier run of the service (run ${job.runId ?? '?'})` : ''}</div>
        {job ? (
          <div className="drawer-controls">
            <label className="inline-label">Priority <PriorityInput job={job} /></label>
            <JobActions job={job} withLabels />
          </div>
        ) : null}
      </header>
      <div className="drawer-body">
        {job ? (
          <>
            {job.error ? (
              <section className="drawer-section" aria-labelledby="error-title">
                <h3 id="error-title">Error</h3>
                <pre className="error-text">{job.error}</pre>
              </section>
            ) : null}
            {job.gpuErrors?.first ? (
              <section className="drawer-section" aria-labelledby="gpu-errors-title">
                <h3 id="gpu-errors-title">GPU errors ({job.gpuErrors.count})</h3>
                <p className="muted">Uncaptured: the job never saw them, so its results may be wrong even if it finished.</p>
                <pre className="error-text">{job.gpuErrors.first.type}: {job.gpuErrors.first.message}</pre>
              </section>
            ) : null}
            <section className="drawer-section" aria-label="Details"><Details job={job} /></section>
          </>
        ) : (
          <p className="muted">The service no longer lists this job.</p>
        )}
        <Output jobId={jobId} />
      </div>
    </aside>
  );
}
