/**
 * `salus submit FILE`: hands a job to Slurm, which picks the node; the job then
 * runs there under `salus run` on that node's Salus service (see batchScript.ts
 * and docs/slurm.md). Without `--slurm` and without Slurm's commands on PATH,
 * the job goes to this machine's own service instead, as the panel launches
 * one. Prints the job's id: Slurm's, or the service's. Where slurmrestd is
 * configured (`$SALUS_SLURMRESTD`), its REST API stands in for Slurm's commands.
 */
import { existsSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseSize } from '../platform/size.js';
import { schedulingHintFlags } from '../platform/hintFlags.js';
import { SALUS_CLI_PATH } from '../platform/cliPath.js';
import type { JobHints } from '../protocol/state.js';
import { batchScript, SLURM_COMMENT } from './batchScript.js';
import { gresRequest, type GresRequest, type SlurmNode } from './slurmNodes.js';
import { listNodes, restConfig, restSubmit } from './slurmRest.js';
import { findOnPath, runSlurm, SlurmNotFoundError } from './slurmCommands.js';

/** `salus submit`'s options, as parsed from its arguments. */
export interface SubmitRequest {
  file: string;
  args: string[];
  slurm: boolean;
  name: string;
  partition?: string;
  time?: string;
  output?: string;
  socket?: string;
  /** `--gres` given by the user: used as is, no sizing. */
  gres?: string;
  /** GPU memory of the nodes that do not state theirs. */
  gpuMemoryBytes?: number;
  hints: JobHints;
  /** `salus run`'s hint flags, as the user wrote them. */
  runFlags: string[];
  /** Print the sbatch script instead of submitting it. */
  print: boolean;
}

/** What a submission produced: where it went and the id there. */
export interface SubmitResult {
  where: 'slurm' | 'local';
  jobId: string;
  /** Slurm's `--gres`, and why that much. */
  gres?: string;
  reason?: string;
}

/** Parses `salus submit`'s arguments; throws with a message for the user. */
export function parseSubmitArgs(argv: string[]): SubmitRequest {
  const dashDash = argv.indexOf('--');
  const { values, positionals } = parseArgs({
    args: dashDash >= 0 ? argv.slice(0, dashDash) : argv, allowPositionals: true, options: {
      slurm: { type: 'boolean' }, partition: { type: 'string' }, time: { type: 'string' }, output: { type: 'string' },
      name: { type: 'string' }, socket: { type: 'string' }, gres: { type: 'string' }, 'gpu-memory': { type: 'string' },
      priority: { type: 'string' }, iterations: { type: 'string' }, persistent: { type: 'string' }, ephemeral: { type: 'string' },
      duration: { type: 'string' }, share: { type: 'string' }, print: { type: 'boolean' },
    },
  });
  const [file, ...extra] = positionals;
  if (!file) throw new Error('salus submit needs a FILE');
  const number = (flag: 'priority' | 'iterations') => {
    const value = values[flag];
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new Error(`--${flag} must be a number, got '${value}'`);
    return n;
  };
  const size = (flag: 'persistent' | 'ephemeral' | 'gpu-memory') => {
    const value = values[flag];
    if (value === undefined) return undefined;
    try {
      return parseSize(value);
    } catch (error) {
      throw new Error(`--${flag}: ${(error as Error).message}`);
    }
  };
  const hints: JobHints = {
    priority: number('priority'),
    iterations: number('iterations'),
    ...schedulingHintFlags(values),
    persistentBytes: size('persistent'),
    ephemeralBytes: size('ephemeral'),
  };
  const runFlags = (['priority', 'iterations', 'duration', 'share', 'persistent', 'ephemeral'] as const)
    .flatMap((flag) => (values[flag] === undefined ? [] : [`--${flag}`, values[flag]!]));
  const absolute = resolve(file);
  return {
    file: absolute,
    args: [...extra, ...(dashDash >= 0 ? argv.slice(dashDash + 1) : [])],
    slurm: Boolean(values.slurm),
    name: values.name ?? basename(absolute).replace(/\.[cm]?js$/, ''),
    partition: values.partition,
    time: values.time,
    output: values.output,
    socket: values.socket,
    gres: values.gres,
    gpuMemoryBytes: size('gpu-memory'),
    hints,
    runFlags,
    print: Boolean(values.print),
  };
}

/** The sbatch script for `request` and the gres it asks for, sized on `nodes` unless `--gres` was given. */
export function slurmScript(request: SubmitRequest, nodes: SlurmNode[] | null): { script: string } & GresRequest {
  const needBytes = (request.hints.persistentBytes ?? 0) + (request.hints.ephemeralBytes ?? 0);
  const share: GresRequest = request.gres
    ? { gres: request.gres, reason: 'given with --gres' }
    : gresRequest(nodes ?? [], needBytes, { partition: request.partition, gpuMemoryBytes: request.gpuMemoryBytes });
  const script = batchScript({
    file: request.file, args: request.args, name: request.name, gres: share.gres, constraint: share.constraint, partition: request.partition,
    time: request.time, output: request.output, socket: request.socket, runFlags: request.runFlags, nodePath: process.execPath, cliPath: SALUS_CLI_PATH,
  });
  return { script, ...share };
}

/**
 * Submits the job: to Slurm through slurmrestd where one is configured
 * (slurmRest.ts), else with sbatch when `--slurm` or when sbatch is on PATH,
 * else to the local service through `launchLocal` (the control call
 * `launchJob`). With `print`, resolves with the script and submits nothing.
 */
export async function submitJob(request: SubmitRequest, launchLocal: (hints: JobHints) => Promise<string>): Promise<SubmitResult & { script?: string }> {
  if (!existsSync(request.file)) throw new Error(`salus: job file not found: ${request.file}`);
  const rest = restConfig();
  if (!rest && !findOnPath('sbatch')) {
    if (request.slurm || request.print) throw new SlurmNotFoundError('sbatch', 'install slurm-client or drop --slurm');
    return { where: 'local', jobId: await launchLocal(request.hints) };
  }
  const nodes = request.gres ? null : await listNodes();
  const { script, gres, constraint, reason } = slurmScript(request, nodes);
  const why = constraint ? `${reason}; only on nodes with ${constraint}` : reason;
  if (request.print) return { where: 'slurm', jobId: '', gres, reason: why, script };
  const jobId = rest
    ? await restSubmit(rest, script, { name: request.name, comment: SLURM_COMMENT, gres, constraint, partition: request.partition, time: request.time, output: request.output })
    // --parsable prints "ID" or "ID;CLUSTER".
    : (await runSlurm('sbatch', ['--parsable'], { input: script })).trim().split(';')[0];
  return { where: 'slurm', jobId, gres, reason: why };
}
