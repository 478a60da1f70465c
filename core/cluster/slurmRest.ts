/**
 * Slurm's REST API (slurmrestd), where one is configured, in place of its
 * commands: `$SALUS_SLURMRESTD` is its URL (`http://head:6820`) and
 * `$SLURM_JWT` the user's token (what `scontrol token` prints), sent with the
 * user's name as slurmrestd's JWT authentication wants. Salus speaks the API's
 * v0.0.38 (Slurm 21.08 and 22.05), whose job list has `squeue --json`'s shape.
 */
import { userInfo } from 'node:os';
import { featureGpuMemory, parseGres, parseNodes, type SlurmNode } from './slurmNodes.js';
import { runSlurm } from './slurmCommands.js';

/** Where slurmrestd is and who asks it. */
export interface RestConfig {
  url: string;
  token: string;
  user: string;
}

/** The API version Salus speaks. */
export const REST_VERSION = 'v0.0.38';

/** The configured slurmrestd, or null to use Slurm's commands. Throws when a URL has no token. */
export function restConfig(env: NodeJS.ProcessEnv = process.env): RestConfig | null {
  const url = env.SALUS_SLURMRESTD;
  if (!url) return null;
  if (!env.SLURM_JWT) {
    throw new Error(`salus: SALUS_SLURMRESTD is ${url} but SLURM_JWT is not set: get a token with \`export $(scontrol token)\``);
  }
  return { url: url.replace(/\/+$/, ''), token: env.SLURM_JWT, user: env.SLURM_USER_NAME || userInfo().username };
}

/** Thrown when slurmrestd answers with errors; the message is theirs. */
export class SlurmRestError extends Error {}

/** One call; resolves with the answer's JSON, rejects with slurmrestd's own errors. */
export async function restCall(config: RestConfig, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<any> {
  const url = `${config.url}/slurm/${REST_VERSION}${path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { 'X-SLURM-USER-NAME': config.user, 'X-SLURM-USER-TOKEN': config.token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    throw new SlurmRestError(`salus: cannot reach slurmrestd at ${config.url}: ${((error as Error).cause as Error)?.message ?? (error as Error).message}`);
  }
  const text = await response.text();
  let answer: any = null;
  try {
    answer = JSON.parse(text);
  } catch {
    // Not JSON: an authentication failure or a proxy's page; said below.
  }
  const errors: Array<{ description?: string; error?: string }> = answer?.errors ?? [];
  if (!response.ok || errors.length > 0) {
    const said = errors.map((e) => e.description || e.error).filter(Boolean).join('; ') || text.trim().slice(0, 200) || `HTTP ${response.status}`;
    const hint = response.status === 404 ? `; Salus speaks slurmrestd's ${REST_VERSION}: is the openapi/${REST_VERSION} plugin loaded?`
      : response.status === 401 || response.status === 403 ? `; is SLURM_JWT a live token of ${config.user}? (\`export $(scontrol token)\`)` : '';
    throw new SlurmRestError(`salus: slurmrestd: ${method} ${path}: ${said} (HTTP ${response.status}${hint})`);
  }
  return answer;
}

/** The cluster's nodes, as `scontrol show node` would give them (slurmNodes.ts). */
export async function restNodes(config: RestConfig): Promise<SlurmNode[]> {
  const answer = await restCall(config, 'GET', '/nodes');
  return (answer.nodes as Array<Record<string, any>>).map((node) => {
    const gres = parseGres(String(node.gres ?? ''));
    const features = Array.isArray(node.features) ? node.features.join(',') : String(node.features ?? '');
    const memory = featureGpuMemory(features);
    return {
      name: String(node.name),
      partitions: Array.isArray(node.partitions) ? node.partitions.map(String) : [],
      gpus: gres.get('gpu') ?? 0,
      shards: gres.get('shard') ?? 0,
      gpuMemoryBytes: memory?.bytes ?? null,
      gpuMemoryFeature: memory?.feature ?? null,
      state: String(node.state ?? 'unknown').toUpperCase(),
    };
  });
}

/** The cluster's nodes: from slurmrestd where one is configured, else from `scontrol show node`. */
export async function listNodes(): Promise<SlurmNode[]> {
  const rest = restConfig();
  return rest ? restNodes(rest) : parseNodes(await runSlurm('scontrol', ['show', 'node', '-o'], { query: true }));
}

/**
 * Minutes in one of Slurm's time formats (`minutes`, `minutes:seconds`,
 * `hours:minutes:seconds`, `days-hours[:minutes[:seconds]]`), seconds rounded
 * up; null for `UNLIMITED`/`infinite`. Throws on anything else, as sbatch would.
 */
export function slurmTimeMinutes(text: string): number | null {
  if (/^(unlimited|infinite)$/i.test(text)) return null;
  const match = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(text.trim());
  if (!match) throw new Error(`salus: --time ${text}: not a Slurm time (minutes, minutes:seconds, hours:minutes:seconds, days-hours[:minutes[:seconds]])`);
  const [days, a, b, c] = [match[1], match[2], match[3], match[4]].map((v) => (v === undefined ? undefined : Number(v)));
  let seconds: number;
  if (days !== undefined) seconds = days * 86_400 + a! * 3600 + (b ?? 0) * 60 + (c ?? 0);
  else if (c !== undefined) seconds = a! * 3600 + b! * 60 + c;
  else if (b !== undefined) seconds = a! * 60 + b;
  else seconds = a! * 60;
  return Math.ceil(seconds / 60);
}

/** What sbatch would read from the script's `#SBATCH` lines, for the REST API (which reads none). */
export interface RestJobFields {
  name: string;
  comment: string;
  gres: string;
  constraint?: string;
  partition?: string;
  time?: string;
  output?: string;
}

/** Submits the script; resolves with Slurm's job id. The job gets this process's environment and folder, as with sbatch. */
export async function restSubmit(config: RestConfig, script: string, fields: RestJobFields): Promise<string> {
  const minutes = fields.time === undefined ? null : slurmTimeMinutes(fields.time);
  const environment = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const job = {
    name: fields.name,
    comment: fields.comment,
    gres: fields.gres,
    current_working_directory: process.cwd(),
    environment,
    ...(fields.partition ? { partition: fields.partition } : {}),
    ...(fields.constraint ? { constraints: fields.constraint } : {}),
    ...(minutes !== null ? { time_limit: minutes } : {}),
    // sbatch's default, which the REST API does not apply.
    standard_output: fields.output ?? `${process.cwd()}/slurm-%j.out`,
  };
  const answer = await restCall(config, 'POST', '/job/submit', { script, job });
  return String(answer.job_id);
}

/** `squeue --json`'s text, from the API's job list (the same shape in v0.0.38). */
export async function restJobsJson(config: RestConfig): Promise<string> {
  return JSON.stringify(await restCall(config, 'GET', '/jobs'));
}

/**
 * Cancels a job (state CANCELLED). The API's cancel is a SIGKILL, not scancel's SIGTERM first
 * (with `?signal=SIGTERM` it only signals, and the job ends FAILED); the job's memory on the
 * service returns all the same when its process dies.
 */
export async function restCancel(config: RestConfig, slurmJobId: string): Promise<void> {
  await restCall(config, 'DELETE', `/job/${encodeURIComponent(slurmJobId)}`);
}
