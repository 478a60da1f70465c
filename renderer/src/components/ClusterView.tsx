/**
 * The cluster view (issue 12): the Salus jobs Slurm knows, as `salus jobs
 * --cluster` lists them where the service runs — Slurm id, name, node, state
 * and time — with a Kill (scancel) for those that can still run. Asked again
 * every few seconds while shown and the page is visible.
 */
import { useCallback, useEffect, useState, type ReactElement } from 'react';
import { CANCELLABLE_SLURM_STATES, type ClusterJob, type ClusterJobs } from '../../../core/protocol/cluster.js';
import { formatDuration } from '../format.js';
import { useCommands } from '../store/hooks.js';
import { KillButton } from './JobControls.js';

/** How often the view asks Slurm again while shown. */
export const CLUSTER_POLL_MS = 5000;

type Answer = ClusterJobs | { available: null; error: string };

/** How long the job has run (or ran); how long it has waited while pending. */
function jobTime(job: ClusterJob, now: number): string {
  if (job.startedAt !== null) return formatDuration((job.finishedAt ?? now) - job.startedAt);
  if (job.state === 'PENDING' && job.submittedAt !== null) return `waiting ${formatDuration(now - job.submittedAt)}`;
  return '—';
}

export function ClusterView({ pollMs = CLUSTER_POLL_MS }: { pollMs?: number }): ReactElement {
  const commands = useCommands();
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [now, setNow] = useState(() => Date.now());

  const refresh = useCallback(async () => {
    const next = await commands.clusterJobs();
    setAnswer(next);
    setNow(Date.now());
  }, [commands]);

  useEffect(() => {
    let stopped = false;
    const tick = () => {
      if (!stopped && document.visibilityState !== 'hidden') void refresh();
    };
    tick();
    const timer = setInterval(tick, pollMs);
    return () => { stopped = true; clearInterval(timer); };
  }, [refresh, pollMs]);

  const jobs = answer?.available ? answer.jobs : [];
  let empty: string | null = null;
  if (answer === null) empty = 'Asking Slurm…';
  else if (answer.available === false) empty = `Slurm not found on this machine. ${answer.reason}`;
  else if (answer.available === null) empty = `Could not list the cluster's jobs: ${answer.error}`;
  else if (jobs.length === 0) empty = 'No Salus jobs in the cluster. Submit one with `salus submit --slurm FILE`.';

  return (
    <section className="card queue-card cluster-card" aria-labelledby="cluster-title">
      <header className="card-header">
        <h2 id="cluster-title">Cluster jobs <span className="count">{jobs.length}</span></h2>
      </header>
      {empty !== null ? <p className="empty">{empty}</p> : (
        <table className="cluster-table" aria-labelledby="cluster-title">
          <thead>
            <tr><th>Slurm id</th><th>Name</th><th>Node</th><th>State</th><th>Time</th><th><span className="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.slurmJobId}>
                <td className="num">{job.slurmJobId}</td>
                <td>{job.name}</td>
                <td>{job.node ?? '—'}</td>
                <td><span className={`slurm-state slurm-${job.state.toLowerCase()}`}>{job.state}</span></td>
                <td className="num">{jobTime(job, now)}</td>
                <td>
                  {CANCELLABLE_SLURM_STATES.includes(job.state) ? (
                    <KillButton
                      name={`Slurm job ${job.slurmJobId}`}
                      onKill={() => void commands.killClusterJob(job.slurmJobId, job.name).then(refresh)}
                    />
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
