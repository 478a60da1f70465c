/** Plain-text tables for the CLI: jobs, memory, policy, and the cluster's jobs and memory. */
import { formatBytes } from '../platform/size.js';
import type { JobInfo, MemoryMap, PolicyInfo } from '../protocol/state.js';
import type { ClusterJob } from '../protocol/cluster.js';
import type { NodeMemory } from '../cluster/nodeMemory.js';

/** Rows as columns padded to their widest cell, two spaces apart; the first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

/** An iteration time: ms below a second, else seconds; a dash for none. */
function ms(value: number | null): string {
  if (value === null) return '-';
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

/** The table of `salus jobs`: a row per job, or how to start one when there are none. */
export function formatJobs(jobs: JobInfo[]): string {
  if (jobs.length === 0) return 'no jobs (start one with `salus run FILE`)';
  // The GPU column only where some job ran on a GPU other than the first: a single-GPU table stays as it was.
  const manyGpus = jobs.some((j) => j.gpu && j.gpu !== 'gpu0');
  const rows = [['ID', 'NAME', 'STATE', 'PRIO', 'SHARE', 'GPU TIME', 'ITERATIONS', 'AVG ITER', 'PERSISTENT', 'EPHEMERAL', ...(manyGpus ? ['GPU'] : []), 'LANE', 'GPU ERRORS', 'ERROR']];
  for (const j of jobs) {
    rows.push([
      j.id, j.name.slice(0, 24), j.fromEarlierRun ? `${j.state} (earlier run)` : j.state, String(j.priority),
      // GPU TIME: the job's part of what the live jobs have received (FAIR divides it by SHARE).
      String(j.share ?? 1), j.attainedFraction == null ? '-' : `${(100 * j.attainedFraction).toFixed(1)}%`,
      j.iterations.total ? `${j.iterations.done}/${j.iterations.total}` : String(j.iterations.done),
      ms(j.avgIterationMs), formatBytes(j.memory.persistentBytes), formatBytes(j.memory.ephemeralPeakBytes),
      ...(manyGpus ? [j.gpu ?? '-'] : []), j.lane ?? '-', String(j.gpuErrors?.count || '-'),
      // A job that ended `done` after uncaptured GPU errors may have a wrong result: the first error says why.
      (j.error ?? (j.gpuErrors?.first ? `${j.gpuErrors.first.type}: ${j.gpuErrors.first.message}` : '')).slice(0, 60),
    ]);
  }
  return table(rows);
}

/** The text of `salus memory`: capacity, used and free, each job's persistent memory and each lane; with several GPUs the totals, then a section per GPU. */
export function formatMemory(memory: MemoryMap): string {
  if (!memory.gpus || memory.gpus.length < 2) return formatOneMemory(memory);
  const total = `${memory.gpus.length} GPUs: capacity ${formatBytes(memory.capacityBytes)}, used ${formatBytes(memory.usedBytes)}, free ${formatBytes(memory.freeBytes)}`;
  return [total, ...memory.gpus.map((gpu) => `${gpu.id}: ${gpu.name}\n${formatOneMemory(gpu)}`)].join('\n\n');
}

function formatOneMemory(memory: Omit<MemoryMap, 'gpus'>): string {
  const pct = (n: number) => `${((100 * n) / Math.max(1, memory.capacityBytes)).toFixed(1)}%`;
  const kept = memory.keptPipelines;
  const lines = [
    `capacity ${formatBytes(memory.capacityBytes)} (${memory.capacitySource})`,
    `used     ${formatBytes(memory.usedBytes)} (${pct(memory.usedBytes)})   free ${formatBytes(memory.freeBytes)}`,
    ...(kept && (kept.count > 0 || kept.reused > 0)
      ? [`pipelines ${kept.count} kept compiled from ended jobs (in the service's memory); ${kept.reused} handed to later jobs so far`]
      : []),
    '',
  ];
  const rows = [['WHAT', 'SIZE', 'POOLED', 'JOBS', 'RUNNING', 'PAGED OUT', 'WORKING SET', 'LIVE-IN']];
  for (const job of memory.jobs) {
    // Paged out: in host memory, not counted in SIZE; working set and live-in: the job's last iteration.
    const bytes = (value: number | undefined) => (value ? formatBytes(value) : '-');
    rows.push([`${job.id} persistent`, formatBytes(job.persistentBytes), '-', '-', '-', bytes(job.pagedOutBytes), bytes(job.workingSetBytes), bytes(job.liveInBytes)]);
  }
  for (const lane of memory.lanes) {
    rows.push([lane.id, formatBytes(lane.sizeBytes), formatBytes(lane.pooledBytes), lane.jobs.join(',') || '-', lane.running ?? '-', '', '', '']);
  }
  return lines.join('\n') + (rows.length > 1 ? table(rows) : '(nothing allocated)');
}

/** The text of `salus policy`: the policy's name, then each knob's value, range and meaning. */
export function formatPolicy(policy: PolicyInfo): string {
  const lines = [`policy ${policy.name}`];
  for (const knob of policy.knobs) {
    const range = knob.kind === 'number' ? ` [${knob.min ?? ''}..${knob.max ?? ''}${knob.unit ? ` ${knob.unit}` : ''}]` : ' [on|off]';
    lines.push(`  ${knob.key} = ${String(policy.params[knob.key])}${range}  ${knob.description}`);
  }
  return lines.join('\n');
}

/** The table of `salus jobs --cluster`. */
export function formatClusterJobs(jobs: ClusterJob[]): string {
  if (jobs.length === 0) return 'no Salus jobs in the cluster (submit one with `salus submit FILE`)';
  const rows = [['SLURM ID', 'NAME', 'STATE', 'NODE', 'USER', 'PARTITION', 'EXIT']];
  for (const job of jobs) {
    rows.push([job.slurmJobId, job.name.slice(0, 24), job.state, job.node ?? '-', job.user, job.partition, job.exitCode === null ? '-' : String(job.exitCode)]);
  }
  return table(rows);
}

/** The text of `salus memory --cluster`: each node's map under a line naming it. */
export function formatClusterMemory(nodes: NodeMemory[]): string {
  if (nodes.length === 0) return 'no node of the cluster has a GPU in Slurm';
  return nodes.map((entry) => (entry.memory
    ? `${entry.node}: ${formatBytes(entry.memory.usedBytes)} of ${formatBytes(entry.memory.capacityBytes)} used (${entry.socket})\n${formatMemory(entry.memory)}`
    : `${entry.node}: ${entry.error}`)).join('\n\n');
}
