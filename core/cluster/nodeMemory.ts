/**
 * `salus memory --cluster --socket PATTERN`: each GPU node's memory map, from
 * its own service, where this machine can reach it. PATTERN names each node's
 * socket as seen from here (`%n` the node's name, `%u` the user's): a shared
 * folder the services listen in, or sockets an SSH tunnel forwards
 * (`ssh -L /tmp/salus-gpu01.sock:/run/salus/ann/salus.sock gpu01`).
 */
import { userInfo } from 'node:os';
import { ServiceConnection } from '../client/connection.js';
import type { MemoryMap, ServiceSnapshot } from '../protocol/state.js';
import { listNodes } from './slurmRest.js';

/** One node's entry of `salus memory --cluster --json`: its map, or why it could not be read. */
export interface NodeMemory {
  node: string;
  socket: string;
  /** The node name its service says (it should be `node`). */
  serviceNode: string | null;
  memory: MemoryMap | null;
  error: string | null;
}

/** PATTERN with `%n` and `%u` filled in. */
export function nodeSocketPath(pattern: string, node: string, user = userInfo().username): string {
  return pattern.replace(/%n/g, node).replace(/%u/g, user);
}

async function readNode(node: string, socket: string, timeoutMs: number): Promise<NodeMemory> {
  let connection: ServiceConnection | null = null;
  let timer: NodeJS.Timeout | undefined;
  try {
    const read = (async () => {
      connection = await ServiceConnection.open(socket, { role: 'control' });
      return connection.call<ServiceSnapshot>('snapshot');
    })();
    const snapshot = await Promise.race([read, new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    })]);
    return { node, socket, serviceNode: snapshot.node ?? null, memory: snapshot.memory, error: null };
  } catch (error) {
    return { node, socket, serviceNode: null, memory: null, error: (error as Error).message.replace(/^salus: /, '') };
  } finally {
    clearTimeout(timer);
    (connection as ServiceConnection | null)?.close();
  }
}

/** The memory maps of the cluster's GPU nodes (of `partition`), read side by side. */
export async function clusterMemory(pattern: string, options: { partition?: string; timeoutMs?: number } = {}): Promise<NodeMemory[]> {
  if (!pattern.includes('%n')) {
    throw new Error('salus memory --cluster needs --socket PATTERN with %n for the node\'s name: where each node\'s service is reachable from here (see docs/slurm.md)');
  }
  const nodes = (await listNodes())
    .filter((node) => node.gpus > 0 && (!options.partition || node.partitions.includes(options.partition)));
  return Promise.all(nodes.map((node) => readNode(node.name, nodeSocketPath(pattern, node.name), options.timeoutMs ?? 5000)));
}
