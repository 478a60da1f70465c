/**
 * The CLI's text tables (core/cli/format.ts): what `salus jobs`, `salus memory`,
 * `salus policy` and their `--cluster` forms print, from the JSON shapes the
 * service answers. The policy's knobs are the scheduler's own.
 */
import { describe, expect, it } from 'vitest';
import { formatClusterJobs, formatClusterMemory, formatJobs, formatMemory, formatPolicy, table } from '../../../core/cli/format.js';
import { getPolicy } from '../../../core/scheduler/index.js';
import type { JobInfo, MemoryMap } from '../../../core/protocol/state.js';
import type { ClusterJob } from '../../../core/protocol/cluster.js';

const MiB = 1024 * 1024;

/** A job as `salus jobs --json` answers it; `overrides` replace fields. */
function job(overrides: Partial<JobInfo>): JobInfo {
  return {
    id: 'job-1', name: 'train', state: 'running', priority: 0, iterations: { done: 0, total: null },
    memory: { persistentBytes: 0, ephemeralPeakBytes: 0 }, lane: null, submittedAt: 0, startedAt: null, finishedAt: null,
    avgIterationMs: null, attainedMs: 0, queuedMs: 0, share: 1, attainedFraction: null, error: null, pid: null,
    iterationSource: 'inferred', gpuErrors: { count: 0, first: null }, ...overrides,
  };
}

/** The cells of each line of a table, split where the columns are (two spaces or more). */
const cells = (text: string) => text.split('\n').map((line) => line.split(/ {2,}/));

describe('table', () => {
  it('pads each column to its widest cell, two spaces apart, with no trailing blanks', () => {
    expect(table([['A', 'BB', 'C'], ['long', 'x', '']])).toBe('A     BB  C\nlong  x');
  });
});

describe('formatJobs', () => {
  it('says how to start a job when there are none', () => {
    expect(formatJobs([])).toBe('no jobs (start one with `salus run FILE`)');
  });

  it('prints a row per job: progress against the declared total, GPU time share, sizes, lane', () => {
    const text = formatJobs([
      job({
        id: 'job-3', name: 'sweep-3', priority: 2, share: 3, attainedFraction: 0.756, iterations: { done: 40, total: 500 },
        avgIterationMs: 1520, memory: { persistentBytes: 4 * MiB, ephemeralPeakBytes: 1536 * 1024 }, lane: 'lane-1',
      }),
      job({ id: 'job-4', state: 'queued', iterations: { done: 0, total: null }, avgIterationMs: 12.34 }),
    ]);
    const [header, first, second] = cells(text);
    expect(header).toEqual(['ID', 'NAME', 'STATE', 'PRIO', 'SHARE', 'GPU TIME', 'ITERATIONS', 'AVG ITER', 'PERSISTENT', 'EPHEMERAL', 'LANE', 'GPU ERRORS', 'ERROR']);
    expect(first).toEqual(['job-3', 'sweep-3', 'running', '2', '3', '75.6%', '40/500', '1.52 s', '4 MiB', '1.50 MiB', 'lane-1', '-']);
    expect(second).toEqual(['job-4', 'train', 'queued', '0', '1', '-', '0', '12.3 ms', '0 B', '0 B', '-', '-']);
  });

  it('marks earlier runs, clips long names and errors, and names the first uncaught GPU error of a job that ended done', () => {
    const longName = 'n'.repeat(40);
    const text = formatJobs([
      job({ id: 'job-1', state: 'done', fromEarlierRun: true, name: longName, error: `lost: ${'x'.repeat(100)}` }),
      job({ id: 'job-2', state: 'done', gpuErrors: { count: 3, first: { type: 'validation', message: 'Buffer is destroyed' } } }),
    ]);
    const [, earlier, errors] = cells(text);
    expect(earlier.slice(0, 3)).toEqual(['job-1', 'n'.repeat(24), 'done (earlier run)']);
    expect(earlier.at(-1)).toHaveLength(60);
    expect(errors.slice(-2)).toEqual(['3', 'validation: Buffer is destroyed']);
  });
});

describe('formatMemory', () => {
  const memory: MemoryMap = {
    capacityBytes: 64 * MiB, usedBytes: 16 * MiB, freeBytes: 48 * MiB, capacitySource: '--memory',
    jobs: [{ id: 'job-1', persistentBytes: 8 * MiB, pagedOutBytes: 2 * MiB, workingSetBytes: 10 * MiB, liveInBytes: 0 }],
    lanes: [
      { id: 'lane-1', sizeBytes: 8 * MiB, pooledBytes: 4 * MiB, jobs: ['job-1', 'job-2'], running: 'job-2' },
      { id: 'lane-2', sizeBytes: 0, pooledBytes: 0, jobs: [], running: null },
    ],
  };

  it('heads with the capacity, where it came from, and what is used and free', () => {
    const [capacity, used, header] = formatMemory(memory).split('\n');
    expect(capacity).toBe('capacity 64 MiB (--memory)');
    expect(used).toBe('used     16 MiB (25.0%)   free 48 MiB');
    expect(header).toMatch(/^WHAT /);
  });

  it('says how many compiled pipelines the service keeps for later jobs, once it keeps or handed out any', () => {
    const lines = formatMemory({ ...memory, keptPipelines: { count: 43, reused: 86 } }).split('\n');
    expect(lines[2]).toBe('pipelines 43 kept compiled from ended jobs (in the service\'s memory); 86 handed to later jobs so far');
    expect(lines[3]).toMatch(/^WHAT /);
    expect(formatMemory({ ...memory, keptPipelines: { count: 0, reused: 0 } })).toBe(formatMemory(memory));
  });

  it('lists each job\'s persistent memory and each lane, with a dash for what is not there', () => {
    const rows = cells(formatMemory(memory)).slice(2);
    expect(rows[0]).toEqual(['WHAT', 'SIZE', 'POOLED', 'JOBS', 'RUNNING', 'PAGED OUT', 'WORKING SET', 'LIVE-IN']);
    expect(rows[1]).toEqual(['job-1 persistent', '8 MiB', '-', '-', '-', '2 MiB', '10 MiB', '-']);
    expect(rows[2]).toEqual(['lane-1', '8 MiB', '4 MiB', 'job-1,job-2', 'job-2']);
    expect(rows[3]).toEqual(['lane-2', '0 B', '0 B', '-', '-']);
  });

  it('says nothing is allocated on an empty GPU, and divides by no zero capacity', () => {
    const empty = formatMemory({ capacityBytes: 0, usedBytes: 0, freeBytes: 0, capacitySource: 'test', jobs: [], lanes: [] });
    expect(empty).toBe('capacity 0 B (test)\nused     0 B (0.0%)   free 0 B\n(nothing allocated)');
  });
});

describe('formatPolicy', () => {
  it('prints every knob of the scheduler\'s policy with its value, range and meaning', () => {
    const srtf = getPolicy('SRTF');
    const text = formatPolicy({ name: srtf.name, params: { ...srtf.defaults, holdMs: 100 }, knobs: [...srtf.knobs] });
    const lines = text.split('\n');
    expect(lines[0]).toBe('policy SRTF');
    expect(lines).toHaveLength(1 + srtf.knobs.length);
    const hold = srtf.knobs.find((knob) => knob.key === 'holdMs')!;
    expect(lines).toContain(`  holdMs = 100 [${hold.min ?? ''}..${hold.max ?? ''} ms]  ${hold.description}`);
    expect(lines.find((line) => line.startsWith('  workConserving = '))).toMatch(/^ {2}workConserving = (true|false) \[on\|off\] {2}\S/);
  });
});

describe('the cluster\'s tables', () => {
  const slurmJob = (overrides: Partial<ClusterJob>): ClusterJob => ({
    slurmJobId: '4101', name: 'salus-train', user: 'ada', state: 'RUNNING', node: 'gpu-1', partition: 'gpu',
    submittedAt: null, startedAt: null, finishedAt: null, exitCode: null, output: null, ...overrides,
  });

  it('formatClusterJobs: a row per Slurm job, a dash for a node or exit code Slurm has not given', () => {
    expect(formatClusterJobs([])).toMatch(/^no Salus jobs in the cluster/);
    const [header, running, pending] = cells(formatClusterJobs([slurmJob({ exitCode: 0, state: 'COMPLETED' }), slurmJob({ slurmJobId: '4102', state: 'PENDING', node: null })]));
    expect(header).toEqual(['SLURM ID', 'NAME', 'STATE', 'NODE', 'USER', 'PARTITION', 'EXIT']);
    expect(running).toEqual(['4101', 'salus-train', 'COMPLETED', 'gpu-1', 'ada', 'gpu', '0']);
    expect(pending).toEqual(['4102', 'salus-train', 'PENDING', '-', 'ada', 'gpu', '-']);
  });

  it('formatClusterMemory: each node\'s map under a line naming it, or why it could not be read', () => {
    expect(formatClusterMemory([])).toBe('no node of the cluster has a GPU in Slurm');
    const map: MemoryMap = { capacityBytes: 8 * MiB, usedBytes: 2 * MiB, freeBytes: 6 * MiB, capacitySource: 'nvidia-smi', jobs: [], lanes: [] };
    const text = formatClusterMemory([
      { node: 'gpu-1', socket: '/run/salus/gpu-1.sock', serviceNode: 'gpu-1', memory: map, error: null },
      { node: 'gpu-2', socket: '/run/salus/gpu-2.sock', serviceNode: null, memory: null, error: 'no service at /run/salus/gpu-2.sock' },
    ]);
    const [first, second] = text.split('\n\n');
    expect(first.split('\n')[0]).toBe('gpu-1: 2 MiB of 8 MiB used (/run/salus/gpu-1.sock)');
    expect(first).toContain('capacity 8 MiB (nvidia-smi)');
    expect(second).toBe('gpu-2: no service at /run/salus/gpu-2.sock');
  });
});
