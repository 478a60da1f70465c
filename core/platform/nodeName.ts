/**
 * The name of the machine a service runs on, as a cluster knows it: Slurm's
 * name for the node where Slurm started the service (`SLURMD_NODENAME`, set in
 * a prolog's and a job's environment), else the host's short name.
 */
import { hostname } from 'node:os';

/** This process's node name. */
export function nodeName(env: NodeJS.ProcessEnv = process.env): string {
  return env.SLURMD_NODENAME || hostname().split('.')[0];
}
