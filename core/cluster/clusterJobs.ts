/**
 * `salus jobs --cluster` and `salus kill slurm:ID`: the Salus jobs Slurm knows
 * (those `salus submit` marked with its comment), from `squeue --json` where
 * the installed Slurm has it (21.08 and later), else from `squeue -o`; and
 * `scancel` for one of them; slurmrestd's API instead where one is configured
 * (slurmRest.ts). squeue shows a finished job for `MinJobAge`
 * (300 s by default) after its end.
 */
import { SLURM_COMMENT } from './batchScript.js';
import { runSlurm, SlurmCommandError, SlurmNotFoundError } from './slurmCommands.js';
import type { ClusterJob, ClusterJobs } from '../protocol/cluster.js';
import { restCancel, restConfig, restJobsJson } from './slurmRest.js';

export type { ClusterJob } from '../protocol/cluster.js';

const seconds = (value: unknown) => (typeof value === 'number' && value > 0 ? value * 1000 : null);

/** The jobs of `squeue --json` (Slurm 21.08 to 23.02's v0.0.3x shape) that are Salus's. */
export function parseSqueueJson(text: string): ClusterJob[] {
  const jobs = (JSON.parse(text) as { jobs?: Array<Record<string, any>> }).jobs ?? [];
  return jobs.filter((job) => job.comment === SLURM_COMMENT).map((job) => {
    const state = String(Array.isArray(job.job_state) ? job.job_state[0] : job.job_state);
    const ended = seconds(job.end_time) !== null && !['PENDING', 'RUNNING', 'CONFIGURING'].includes(state);
    return {
      slurmJobId: String(job.job_id),
      name: String(job.name),
      user: String(job.user_name ?? ''),
      state,
      node: job.nodes ? String(job.nodes) : null,
      partition: String(job.partition ?? ''),
      submittedAt: seconds(job.submit_time),
      startedAt: seconds(job.start_time),
      finishedAt: ended ? seconds(job.end_time) : null,
      // exit_code is the wait status there: the code in its high byte.
      exitCode: ended && typeof job.exit_code === 'number' ? job.exit_code >> 8 : null,
      output: job.standard_output ? String(job.standard_output) : null,
    };
  });
}

/** squeue's fields for Slurms without --json, `|`-separated: id, name, user, state, nodes, partition, comment. */
const SQUEUE_FORMAT = '%i|%j|%u|%T|%N|%P|%k';

/** Parses `squeue -h -o SQUEUE_FORMAT`. */
export function parseSqueueText(text: string): ClusterJob[] {
  return text.split('\n').filter(Boolean).map((line) => line.split('|')).filter((f) => f[6] === SLURM_COMMENT).map((f) => ({
    slurmJobId: f[0], name: f[1], user: f[2], state: f[3], node: f[4] || null, partition: f[5],
    submittedAt: null, startedAt: null, finishedAt: null, exitCode: null, output: null,
  }));
}

/** The cluster's Salus jobs, oldest first. */
export async function listClusterJobs(): Promise<ClusterJob[]> {
  const rest = restConfig();
  let jobs: ClusterJob[];
  if (rest) jobs = parseSqueueJson(await restJobsJson(rest));
  else try {
    jobs = parseSqueueJson(await runSlurm('squeue', ['--json'], { query: true }));
  } catch (error) {
    if (!(error instanceof SlurmCommandError) || !/unrecognized|invalid option|unknown option/i.test(error.stderr)) throw error;
    jobs = parseSqueueText(await runSlurm('squeue', ['-h', '-t', 'all', '-o', SQUEUE_FORMAT], { query: true }));
  }
  return jobs.sort((a, b) => Number(a.slurmJobId) - Number(b.slurmJobId));
}

/** The panel's "cluster jobs": listClusterJobs, or `{available: false, reason}` where Slurm is not installed. */
export async function clusterJobsAnswer(): Promise<ClusterJobs> {
  try {
    return { available: true, jobs: await listClusterJobs() };
  } catch (error) {
    if (error instanceof SlurmNotFoundError) return { available: false, reason: error.message };
    throw error;
  }
}

/** A Slurm job id in `salus kill`'s argument (`slurm:123`, or digits alone), else null. */
export function slurmJobIdOf(id: string): string | null {
  const match = /^(?:slurm:)?(\d+(?:_\d+)?)$/.exec(id);
  return match ? match[1] : null;
}

/** Ends a Slurm job with `scancel`; Slurm's refusal is relayed. */
export async function cancelSlurmJob(slurmJobId: string): Promise<void> {
  const rest = restConfig();
  if (rest) {
    await restCancel(rest, slurmJobId);
    return;
  }
  // scancel of a job Slurm does not know says so on stderr but exits 0: ask squeue first, which fails for it.
  try {
    await runSlurm('squeue', ['--noheader', '--jobs', slurmJobId, '--format', '%i'], { query: true, notFoundHint: 'install slurm-client to end a Slurm job' });
  } catch (error) {
    if (error instanceof SlurmCommandError && /invalid job id/i.test(error.stderr)) {
      throw new Error(`salus: Slurm has no job ${slurmJobId} (it ended a while ago, or never was): see salus jobs --cluster`);
    }
    throw error;
  }
  await runSlurm('scancel', [slurmJobId], { notFoundHint: 'install slurm-client to end a Slurm job' });
}
