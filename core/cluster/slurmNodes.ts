/**
 * The cluster's GPU nodes as Slurm describes them (`scontrol show node -o`),
 * and the share of a node's GPU a Salus job asks Slurm for.
 *
 * Slurm knows how many GPUs and shards (`Gres=gpu:1,shard:16`) a node has, not
 * how much memory its GPU holds. A node says that with a feature named
 * `gpumem_SIZE` (e.g. `Features=gpumem_80GiB` in slurm.conf), or `salus submit
 * --gpu-memory SIZE` says it for the nodes that do not. With both a size and
 * shards, a job asks for `shard:N`, N = ⌈(persistent + ephemeral) / (GPU memory
 * / shards per GPU)⌉: what the job would need alone, as MPS-style sharing counts
 * it. A node's shards are its GPUs' together (`Gres=gpu:4,shard:64`: 16 a GPU),
 * and one service on the node shares all of its GPUs, placing each job on one.
 * Salus then packs tighter on the node (its lanes share ephemeral memory), so
 * Slurm's count errs on the safe side. Where some GPUs are too small for the
 * job, a `--constraint` on the features of the big enough ones keeps it off them.
 */
import { parseSize, formatBytes } from '../platform/size.js';

/** A node of the cluster, with what Salus needs to place a job on its GPU. */
export interface SlurmNode {
  name: string;
  partitions: string[];
  /** GPUs in its gres (0: none). */
  gpus: number;
  /** Shards of all its GPUs together in its gres (0: shards not configured there). */
  shards: number;
  /** Its GPU's memory (per GPU), from a `gpumem_SIZE` feature; null when it does not say. */
  gpuMemoryBytes: number | null;
  /** That feature, for a constraint that keeps a job off GPUs too small for it. */
  gpuMemoryFeature: string | null;
  state: string;
}

/** Counts of each gres name in `gpu:1,shard:16` or `gpu:a100:2(S:0-1),shard:a100:8`. */
export function parseGres(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!text || text === '(null)') return counts;
  for (const item of text.split(',')) {
    const parts = item.replace(/\(.*\)$/, '').split(':');
    const count = Number(parts[parts.length - 1]);
    const name = parts[0];
    if (name) counts.set(name, (counts.get(name) ?? 0) + (parts.length > 1 && Number.isFinite(count) ? count : 1));
  }
  return counts;
}

/** The GPU memory a node's features state (`gpumem_80GiB`) and that feature, or null. */
export function featureGpuMemory(features: string): { feature: string; bytes: number } | null {
  for (const feature of features.split(/[,&|]/).map((f) => f.trim())) {
    const match = /^gpumem_(.+)$/i.exec(feature);
    if (!match) continue;
    try {
      return { feature, bytes: parseSize(match[1]) };
    } catch {
      // Not a size: not ours.
    }
  }
  return null;
}

/** Parses `scontrol show node -o` (one node a line, KEY=VALUE words). */
export function parseNodes(text: string): SlurmNode[] {
  const nodes: SlurmNode[] = [];
  for (const line of text.split('\n')) {
    const fields = new Map<string, string>();
    for (const word of line.trim().split(/\s+/)) {
      const eq = word.indexOf('=');
      if (eq > 0) fields.set(word.slice(0, eq), word.slice(eq + 1));
    }
    const name = fields.get('NodeName');
    if (!name) continue;
    const gres = parseGres(fields.get('Gres') ?? '');
    const memory = featureGpuMemory(fields.get('AvailableFeatures') ?? '');
    nodes.push({
      name,
      partitions: (fields.get('Partitions') ?? '').split(',').filter(Boolean),
      gpus: gres.get('gpu') ?? 0,
      shards: gres.get('shard') ?? 0,
      gpuMemoryBytes: memory?.bytes ?? null,
      gpuMemoryFeature: memory?.feature ?? null,
      state: fields.get('State') ?? 'UNKNOWN',
    });
  }
  return nodes;
}

/** What to ask Slurm for: the `--gres` value, a `--constraint` when some GPUs are too small, and why. */
export interface GresRequest {
  gres: string;
  constraint?: string;
  reason: string;
}

/**
 * The `--gres` a job with `needBytes` (persistent + ephemeral hints; 0 when it
 * gave none) asks for on `nodes` (those of its partition). Throws, in the
 * user's words, when no node has a GPU or the job fits no node's GPU.
 * `gpuMemoryBytes` stands in for nodes that do not state theirs.
 */
export function gresRequest(nodes: SlurmNode[], needBytes: number, options: { partition?: string; gpuMemoryBytes?: number } = {}): GresRequest {
  const where = options.partition ? `partition ${options.partition}` : 'the cluster';
  const gpuNodes = nodes.filter((node) => node.gpus > 0 && (!options.partition || node.partitions.includes(options.partition)));
  if (gpuNodes.length === 0) {
    throw new Error(`salus: no node of ${where} has a GPU in Slurm (no gpu in any node's Gres=); see docs/slurm.md`);
  }
  const memoryOf = (node: SlurmNode) => node.gpuMemoryBytes ?? options.gpuMemoryBytes ?? null;
  const known = gpuNodes.filter((node) => memoryOf(node) !== null);
  let constraint: string | undefined;
  if (needBytes > 0 && known.length === gpuNodes.length) {
    const fits = known.filter((node) => memoryOf(node)! >= needBytes);
    if (fits.length === 0) {
      const largest = known.reduce((a, b) => (memoryOf(b)! > memoryOf(a)! ? b : a));
      throw new Error(`salus: the job's hints (${formatBytes(needBytes)} of persistent + ephemeral memory) exceed the GPU of every node of ${where} (the largest: ${largest.name}, ${formatBytes(memoryOf(largest)!)})`);
    }
    // Some GPUs too small: keep the job to nodes whose feature says theirs is big enough.
    if (fits.length < known.length && fits.every((node) => node.gpuMemoryFeature)) {
      constraint = [...new Set(fits.map((node) => node.gpuMemoryFeature!))].join('|');
    }
  }
  const sharded = gpuNodes.filter((node) => node.shards > 0);
  if (sharded.length === 0) return { gres: 'gpu:1', constraint, reason: `no node of ${where} has shards configured: a whole GPU` };
  // The most shards it needs on a node it fits: enough room wherever Slurm puts it.
  let shards = 1;
  for (const node of sharded) {
    const memory = memoryOf(node);
    if (needBytes <= 0 || memory === null || memory < needBytes) continue;
    // A shard is a slice of one GPU: the node's shards are spread over its GPUs.
    const shardsPerGpu = Math.max(1, node.shards / Math.max(1, node.gpus));
    shards = Math.max(shards, Math.ceil(needBytes / (memory / shardsPerGpu)));
  }
  const reason = needBytes > 0 && known.length > 0
    ? `${formatBytes(needBytes)} of hints over each node's GPU memory / shards per GPU`
    : 'one shard: no memory hints, or no node states its GPU memory (a gpumem_SIZE feature or --gpu-memory)';
  return { gres: `shard:${shards}`, constraint, reason };
}
