/**
 * One row of the job queue. It subscribes to its own job by id, so a row
 * re-renders only when that job changed (the store keeps unchanged rows'
 * identity), whatever happens to the other hundreds.
 */
import { memo, type CSSProperties, type ReactElement } from 'react';
import { jobColor } from '../colors.js';
import { formatBytes, formatBytesExact, formatCount, formatDuration, formatIterationMs } from '../format.js';
import { etaMs, progressShare, selectMultiGpu, shownIterations } from '../store/jobView.js';
import { usePanel } from '../store/hooks.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import { JobActions, PriorityInput, StateBadge } from './JobControls.js';

/** Fixed row height in pixels; the virtualizer positions rows by it. */
export const ROW_HEIGHT = 52;

function Progress({ job }: { job: JobInfo }): ReactElement {
  const share = progressShare(job);
  const eta = etaMs(job);
  const { done, total } = shownIterations(job);
  return (
    <div className="progress-cell">
      <div
        className={`progress-track${share === null ? ' open-ended' : ''}`}
        role="progressbar"
        aria-label={`Iterations of ${job.name}`}
        aria-valuemin={0}
        aria-valuemax={total ?? undefined}
        aria-valuenow={done}
        aria-valuetext={total === null ? `${formatCount(done)} iterations, total unknown` : `${formatCount(done)} of ${formatCount(total)} iterations`}
      >
        <div className="progress-fill" style={{ transform: `scaleX(${share ?? 0})`, background: jobColor(job.id) }} />
      </div>
      <div className="progress-text">
        <span>{total === null ? `${formatCount(done)} it · open-ended` : `${formatCount(done)} / ${formatCount(total)}`}</span>
        {eta !== null ? <span className="muted">ETA {formatDuration(eta)}</span> : null}
      </div>
    </div>
  );
}

/** Which job a row shows and where the virtualizer puts it. */
export interface JobRowProps {
  jobId: string;
  /** 1-based position among the table's rows, header included (aria-rowindex). */
  rowIndex: number;
  style: CSSProperties;
}

/** A job's row: badge, name, priority, progress, timing, memory, GPU (when there are several), lane and actions. */
export const JobRow = memo(function JobRow({ jobId, rowIndex, style }: JobRowProps): ReactElement | null {
  const job = usePanel((state) => state.jobsById[jobId]);
  const live = usePanel((state) => state.memory?.lanes.some((lane) => lane.running === jobId) ?? false);
  const selected = usePanel((state) => state.selectedJobId === jobId);
  const selectJob = usePanel((state) => state.selectJob);
  const multiGpu = usePanel(selectMultiGpu);
  if (!job) return null;

  return (
    <div
      role="row"
      aria-rowindex={rowIndex}
      aria-selected={selected}
      className={`job-row state-${job.state}${job.fromEarlierRun ? ' earlier-run' : ''}${selected ? ' selected' : ''}`}
      style={style}
      onClick={(event) => {
        // Clicks on the row's own controls act on those controls only.
        if (!(event.target as Element).closest('button, input')) selectJob(jobId);
      }}
    >
      <div role="cell" className="col-state"><StateBadge state={job.state} live={live && job.state === 'running'} gpuErrors={job.gpuErrors} /></div>
      <div role="cell" className="col-name">
        <span className="job-swatch" style={{ background: jobColor(job.id) }} aria-hidden="true" />
        <button type="button" className="job-name" onClick={() => selectJob(jobId)} aria-label={`Details of ${job.name}`}>
          <span className="job-name-text">{job.name}</span>
          <span className="job-id">{job.id}</span>
          {job.fromEarlierRun ? <span className="earlier-run-tag" title={`From run ${job.runId ?? '?'} of the service, before it last started`}>earlier run</span> : null}
        </button>
      </div>
      <div role="cell" className="col-priority"><PriorityInput job={job} /></div>
      <div role="cell" className="col-progress"><Progress job={job} /></div>
      <div role="cell" className="col-num">{formatIterationMs(job.avgIterationMs)}</div>
      <div role="cell" className="col-num" title={formatBytesExact(job.memory.persistentBytes)}>
        {job.memory.persistentBytes ? formatBytes(job.memory.persistentBytes) : <span className="muted">—</span>}
      </div>
      <div role="cell" className="col-num" title={formatBytesExact(job.memory.ephemeralPeakBytes)}>
        {job.memory.ephemeralPeakBytes ? formatBytes(job.memory.ephemeralPeakBytes) : <span className="muted">—</span>}
      </div>
      {multiGpu ? <div role="cell" className="col-lane col-gpu">{job.gpu ?? <span className="muted">—</span>}</div> : null}
      <div role="cell" className="col-lane">{job.lane ?? <span className="muted">—</span>}</div>
      <div role="cell" className="col-actions"><JobActions job={job} /></div>
    </div>
  );
});
