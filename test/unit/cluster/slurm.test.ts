/** The pure parts of core/cluster: Slurm's node list and the GPU share a job asks for, squeue's output, and the sbatch script. */
import { describe, expect, it } from 'vitest';
import { gresRequest, parseGres, parseNodes } from '../../../core/cluster/slurmNodes.js';
import { parseSqueueJson, parseSqueueText, slurmJobIdOf } from '../../../core/cluster/clusterJobs.js';
import { batchScript, shellWord } from '../../../core/cluster/batchScript.js';
import { nodeSocketPath } from '../../../core/cluster/nodeMemory.js';
import { restConfig, slurmTimeMinutes } from '../../../core/cluster/slurmRest.js';
import { parseSubmitArgs } from '../../../core/cluster/submit.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

// `scontrol show node -o` of Slurm 22.05 (one line each; OS= holds spaces).
const NODES = `NodeName=a1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 AvailableFeatures=gpumem_80GiB,ib ActiveFeatures=gpumem_80GiB,ib Gres=gpu:a100:1(S:0-1),shard:a100:16 NodeAddr=10.0.0.1 OS=Linux 6.1 #1 SMP  State=IDLE Partitions=gpu,all
NodeName=t1 AvailableFeatures=gpumem_16GiB Gres=gpu:1,shard:4 State=MIXED Partitions=small,all
NodeName=c1 AvailableFeatures=(null) Gres=(null) State=IDLE Partitions=all
`;

describe('parseNodes', () => {
  it('reads each node\'s GPUs, shards, GPU memory feature and partitions', () => {
    expect(parseNodes(NODES)).toEqual([
      { name: 'a1', partitions: ['gpu', 'all'], gpus: 1, shards: 16, gpuMemoryBytes: 80 * GiB, gpuMemoryFeature: 'gpumem_80GiB', state: 'IDLE' },
      { name: 't1', partitions: ['small', 'all'], gpus: 1, shards: 4, gpuMemoryBytes: 16 * GiB, gpuMemoryFeature: 'gpumem_16GiB', state: 'MIXED' },
      { name: 'c1', partitions: ['all'], gpus: 0, shards: 0, gpuMemoryBytes: null, gpuMemoryFeature: null, state: 'IDLE' },
    ]);
    expect([...parseGres('gpu:tesla:2,gpu:a100:1,mps:200')]).toEqual([['gpu', 3], ['mps', 200]]);
  });
});

describe('gresRequest', () => {
  const nodes = parseNodes(NODES);

  it('asks for enough shards on every node the job fits', () => {
    // a1: 5 GiB a shard; t1: 4 GiB a shard. 9 GiB needs 2 on a1, 3 on t1: 3.
    expect(gresRequest(nodes, 9 * GiB).gres).toBe('shard:3');
    // 20 GiB fits only a1: 4 shards there, and only there.
    expect(gresRequest(nodes, 20 * GiB)).toMatchObject({ gres: 'shard:4', constraint: 'gpumem_80GiB' });
    expect(gresRequest(nodes, 9 * GiB).constraint).toBeUndefined();
    expect(gresRequest(nodes, 0).gres).toBe('shard:1');
    expect(gresRequest(nodes, 100 * MiB, { partition: 'small' }).gres).toBe('shard:1');
  });

  it('asks for a whole GPU where no node has shards, and uses --gpu-memory for nodes that do not say', () => {
    const plain = parseNodes('NodeName=n1 Gres=gpu:2 Partitions=p\nNodeName=n2 Gres=gpu:1,shard:8 Partitions=q\n');
    expect(gresRequest(plain, GiB, { partition: 'p' }).gres).toBe('gpu:1');
    expect(gresRequest(plain, 3 * GiB, { partition: 'q', gpuMemoryBytes: 8 * GiB }).gres).toBe('shard:3');
    // A node of four 80 GiB GPUs with 64 shards has 16 a GPU (5 GiB each): 9 GiB takes 2, not ⌈9 / 1.25⌉ = 8.
    const four = parseNodes('NodeName=g4 AvailableFeatures=gpumem_80GiB Gres=gpu:4,shard:64 Partitions=big\n');
    expect(gresRequest(four, 9 * GiB)).toMatchObject({ gres: 'shard:2' });
    // Without any size known, nothing is refused: one shard.
    expect(gresRequest(plain, 300 * GiB, { partition: 'q' }).gres).toBe('shard:1');
  });

  it('refuses, in the user\'s words, a job bigger than every GPU or a partition with none', () => {
    expect(() => gresRequest(nodes, 100 * GiB)).toThrow("salus: the job's hints (100 GiB of persistent + ephemeral memory) exceed the GPU of every node of the cluster (the largest: a1, 80 GiB)");
    expect(() => gresRequest(nodes, GiB, { partition: 'cpu' })).toThrow('salus: no node of partition cpu has a GPU in Slurm');
  });
});

describe('cluster jobs', () => {
  it('keeps the Salus jobs of squeue --json, with the exit code out of the wait status', () => {
    const text = JSON.stringify({
      jobs: [
        { job_id: 7, name: 'train', comment: 'salus', user_name: 'ann', job_state: 'FAILED', nodes: 'n1', partition: 'gpu', submit_time: 100, start_time: 101, end_time: 105, exit_code: 768, standard_output: '/o/%j.out' },
        { job_id: 8, name: 'other', comment: '', job_state: 'RUNNING' },
        { job_id: 9, name: 'queued', comment: 'salus', user_name: 'ann', job_state: 'PENDING', nodes: '', partition: 'gpu', submit_time: 110, start_time: 0, end_time: 0, exit_code: 0 },
      ],
    });
    expect(parseSqueueJson(text)).toEqual([
      { slurmJobId: '7', name: 'train', user: 'ann', state: 'FAILED', node: 'n1', partition: 'gpu', submittedAt: 100_000, startedAt: 101_000, finishedAt: 105_000, exitCode: 3, output: '/o/%j.out' },
      { slurmJobId: '9', name: 'queued', user: 'ann', state: 'PENDING', node: null, partition: 'gpu', submittedAt: 110_000, startedAt: null, finishedAt: null, exitCode: null, output: null },
    ]);
  });

  it('reads squeue -o where --json is missing', () => {
    expect(parseSqueueText('12|train|ann|RUNNING|n1|gpu|salus\n13|x|bob|PENDING||gpu|\n')).toEqual([
      { slurmJobId: '12', name: 'train', user: 'ann', state: 'RUNNING', node: 'n1', partition: 'gpu', submittedAt: null, startedAt: null, finishedAt: null, exitCode: null, output: null },
    ]);
  });

  it('routes slurm:ID and plain numbers to Slurm, Salus ids to the service', () => {
    expect(slurmJobIdOf('slurm:42')).toBe('42');
    expect(slurmJobIdOf('42')).toBe('42');
    expect(slurmJobIdOf('job-3')).toBeNull();
  });
});

describe('salus submit arguments', () => {
  it('take the scheduling hints salus run takes, and pass them on to it on the node', () => {
    const request = parseSubmitArgs(['job.js', '--iterations', '10', '--duration', '2m', '--share', '3', '--', '--lr', '1']);
    expect(request.hints).toMatchObject({ iterations: 10, durationMs: 120_000, share: 3 });
    expect(request.runFlags).toEqual(['--iterations', '10', '--duration', '2m', '--share', '3']);
    expect(() => parseSubmitArgs(['job.js', '--share', '0'])).toThrow("--share must be a number above 0, got '0'");
    expect(() => parseSubmitArgs(['job.js', '--duration', 'soon'])).toThrow("--duration: 'soon' is not a duration");
  });
});

describe('the sbatch script', () => {
  const base = { file: '/data/my job.js', args: ["it's"], name: 'train', gres: 'shard:2', runFlags: ['--persistent', '2GiB'], nodePath: '/usr/bin/node', cliPath: '/opt/salus/bin/salus.js' };

  it('quotes what bash would split, and fills %n and %u in the socket on the node', () => {
    expect(shellWord("it's")).toBe("'it'\\''s'");
    const script = batchScript({ ...base, socket: '/run/salus/%u/%n.sock', output: '/o/%x-%j.out', constraint: 'gpumem_80GiB|gpumem_40GiB' });
    expect(script).toContain("#SBATCH --gres=shard:2\n#SBATCH '--constraint=gpumem_80GiB|gpumem_40GiB'\n#SBATCH --output=/o/%x-%j.out\n");
    expect(script).toContain('socket="${socket//%n/$node}"');
    expect(script).toContain(`"\${salus[@]}" run --socket "$socket" --name train --persistent 2GiB '/data/my job.js' -- 'it'\\''s'\n`);
    expect(nodeSocketPath('/s/%u-%n.sock', 'gpu01', 'ann')).toBe('/s/ann-gpu01.sock');
  });

  it('leaves the socket to salus run when none is given', () => {
    const script = batchScript(base);
    expect(script).toContain('socket="${SALUS_SOCKET:-}"');
    expect(script).toContain('"${salus[@]}" run --name train');
    expect(script).not.toContain('#SBATCH --partition');
  });
});

describe('slurmrestd', () => {
  it('turns Slurm\'s time formats into the API\'s minutes, seconds rounded up', () => {
    expect(['90', '1:30', '2:00:00', '1-0', '1-2:30', '0-0:0:1', 'UNLIMITED'].map(slurmTimeMinutes)).toEqual([90, 2, 120, 1440, 1590, 1, null]);
    expect(() => slurmTimeMinutes('soon')).toThrow('salus: --time soon: not a Slurm time');
  });

  it('is used only where a URL is configured, and asks for a token', () => {
    expect(restConfig({})).toBeNull();
    expect(() => restConfig({ SALUS_SLURMRESTD: 'http://head:6820' })).toThrow('SLURM_JWT is not set');
    expect(restConfig({ SALUS_SLURMRESTD: 'http://head:6820/', SLURM_JWT: 't', SLURM_USER_NAME: 'ann' })).toEqual({ url: 'http://head:6820', token: 't', user: 'ann' });
  });
});
