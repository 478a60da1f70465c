/** `salus simulate` as users run it (the compiled CLI): CSV and JSON traces, its output, its errors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild, SALUS_BIN } from '../helpers/service.js';
import { HistoryStore } from '../../core/history/store.js';
import type { JobInfo } from '../../core/protocol/state.js';

let dir: string;
let csvPath: string;
let jsonPath: string;

// A: 10 × 100 ms from 0 s; B: 2 × 100 ms from 0.05 s; C: 5 × 100 ms from 0.15 s (worked out in test/unit/sim/simulator.test.ts).
const HEADER = 'name,arrivalS,iterations,iterationMs,persistentBytes,ephemeralBytes,priority';
const ROWS = ['A,0,10,100,1MiB,4MiB,0', 'B,0.05,2,100,1MiB,4MiB,0', 'C,0.15,5,100,1MiB,4MiB,0'];

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [SALUS_BIN, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const salus = (...args: string[]) => run(['simulate', ...args]);

beforeAll(() => {
  requireBuild();
  dir = mkdtempSync(join(tmpdir(), 'salus-simulate-'));
  csvPath = join(dir, 'three.csv');
  writeFileSync(csvPath, [HEADER, ...ROWS].join('\n'));
  jsonPath = join(dir, 'three.json');
  writeFileSync(jsonPath, JSON.stringify(ROWS.map((row) => {
    const [name, arrivalS, iterations, iterationMs, persistentBytes, ephemeralBytes, priority] = row.split(',');
    return { name, arrivalS: Number(arrivalS), iterations: Number(iterations), iterationMs: Number(iterationMs), persistentBytes, ephemeralBytes, priority: Number(priority) };
  })));
});
afterAll(() => { if (dir) rmSync(dir, { recursive: true, force: true }); });

describe('salus simulate', () => {
  it('hands a long --json answer whole to a reader that is slow to take it', () => {
    const many = join(dir, 'many.csv');
    writeFileSync(many, [HEADER, ...Array.from({ length: 400 }, (_, i) => `job-${i},${i / 100},1,10,1KiB,1KiB,0`)].join('\n'));
    // As `salus simulate … --json | jq` with jq slow to start: the pipe fills, and salus must wait for it.
    const piped = spawnSync('sh', ['-c', `"${process.execPath}" "${SALUS_BIN}" simulate "${many}" --policy FIFO --json | (sleep 1; cat)`], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(piped.status).toBe(0);
    expect(piped.stdout.length).toBeGreaterThan(96 * 1024);
    expect(JSON.parse(piped.stdout).policies[0].jobs).toHaveLength(400);
  });

  it('prints a table per policy and a one-line comparison', () => {
    const run = salus(csvPath, '--policy', 'FIFO', '--policy', 'srtf');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('FIFO (memory unlimited): average JCT 1.23 s, makespan 1.70 s, 1 lane at most');
    expect(run.stdout).toMatch(/^B\s+50 ms\s+1\.15 s\s+950 ms\s+0 ms\s+lane-1$/m);
    expect(run.stdout).toContain('SRTF (memory unlimited): average JCT 867 ms, makespan 1.70 s');
    expect(run.stdout.trimEnd().split('\n').at(-1)).toBe('SRTF: average JCT 1.42× better than FIFO');
  });

  it('answers the same trace given as JSON with --json, every policy by default', () => {
    const run = salus(jsonPath, '--json', '--memory', '64MiB');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.policies.map((p: any) => p.policy)).toEqual(['FIFO', 'SRTF', 'PACK', 'FAIR', 'PRIORITY']);
    const [fifo, srtf, pack] = out.policies;
    expect(fifo.avgJctMs).toBeCloseTo(3700 / 3, 6);
    expect(fifo.makespanMs).toBe(1700);
    expect(fifo.jobs.map((j: any) => [j.name, j.jctMs, j.queuedMs])).toEqual([['A', 1000, 0], ['B', 1150, 950], ['C', 1550, 1050]]);
    expect(srtf.jobs.map((j: any) => j.jctMs)).toEqual([1700, 250, 650]); // B and C ahead of A at its boundaries, shortest first
    // PACK opens a lane per job (each needs 1.1 + 4.2 MiB of the 64): all three side by side.
    expect(pack).toMatchObject({ avgJctMs: (1000 + 200 + 500) / 3, peakLanes: 3 });
    expect(out.memoryBytes).toBe(64 * 1024 ** 2);
    // The same trace as CSV gives the same numbers.
    expect(JSON.parse(salus(csvPath, '--json', '--memory', '64MiB').stdout).policies).toEqual(out.policies);
  });

  it('applies --set to every chosen policy that has the knob', () => {
    const strict = JSON.parse(salus(csvPath, '--json', '--policy', 'FIFO,SRTF', '--set', 'holdMs=0', '--set', 'defaultIterationMs=50').stdout);
    expect(strict.policies[0].params).toMatchObject({ holdMs: 0 });
    expect(strict.policies[0].params.defaultIterationMs).toBeUndefined();
    expect(strict.policies[1].params).toMatchObject({ holdMs: 0, defaultIterationMs: 50 });
    // holdMs=0 with gap-less jobs: a finished iteration's job is not asking at its boundary, so FIFO turns over.
    expect(strict.policies[0].avgJctMs).not.toBeCloseTo(3700 / 3, 0);
  });

  it('places jobs on several GPUs with --gpus N, each GPU with --memory of its own', () => {
    // A and B each hold 40 MiB: on one 64 MiB GPU B waits for A; on two they run side by side.
    const big = join(dir, 'big.csv');
    writeFileSync(big, [HEADER, 'A,0,10,100,40MiB,4MiB,0', 'B,0,10,100,40MiB,4MiB,0'].join('\n'));
    const one = JSON.parse(salus(big, '--json', '--policy', 'FIFO', '--memory', '64MiB').stdout);
    const two = JSON.parse(salus(big, '--json', '--policy', 'FIFO', '--memory', '64MiB', '--gpus', '2').stdout);
    expect(one.policies[0].jobs.map((job: { jctMs: number }) => job.jctMs)).toEqual([1000, 2000]);
    expect(two.gpus).toBe(2);
    expect(two.policies[0].jobs.map((job: { jctMs: number; gpu: string }) => [job.gpu, job.jctMs])).toEqual([['gpu0', 1000], ['gpu1', 1000]]);
    expect(salus(big, '--policy', 'FIFO', '--memory', '64MiB', '--gpus', '2').stdout).toContain('FIFO (memory 64 MiB on each of 2 GPUs)');
    expect(salus(big, '--gpus', '0').stderr).toContain("--gpus must be a whole number from 1 to 1024, got '0'");
  });

  it('lets lanes share the GPU with --max-speedup', () => {
    const run = salus(csvPath, '--policy', 'PACK', '--max-speedup', '1');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("PACK (memory unlimited, lanes side by side at most 1× one lane's speed): average JCT");
    const out = JSON.parse(salus(csvPath, '--json', '--policy', 'PACK', '--max-speedup', '1').stdout);
    // Taking turns only: all 1700 ms of work, as on one lane.
    expect(out).toMatchObject({ maxSpeedup: 1, policies: [{ policy: 'PACK', makespanMs: 1700, peakLanes: 3 }] });
    expect(salus(csvPath, '--max-speedup', '0.5').stderr).toContain("--max-speedup must be a number of at least 1 (1: lanes take turns on the GPU), got '0.5'");
  });

  it('says what is wrong with a trace or an option', () => {
    const badPath = join(dir, 'bad.csv');
    writeFileSync(badPath, [HEADER, ROWS[0], 'B,soon,2,100,0,0,0'].join('\n'));
    const bad = salus(badPath);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('salus: bad.csv line 3: arrivalS is "soon"; expected a number of at least 0');
    const missing = salus(join(dir, 'nope.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`salus: cannot read the trace ${join(dir, 'nope.csv')}: no such file`);
    const policy = salus(csvPath, '--policy', 'LIFO');
    expect(policy.code).toBe(2);
    expect(policy.stderr).toContain('Unknown policy "LIFO"; valid policies: FIFO, SRTF, PACK, FAIR, PRIORITY');
    const knob = salus(csvPath, '--policy', 'FIFO', '--set', 'agingPerSecond=1');
    expect(knob.code).toBe(2);
    expect(knob.stderr).toContain('--set agingPerSecond=1: expected KEY=VALUE with KEY one of workConserving, holdMs, maxLanes');
    const range = salus(csvPath, '--set', 'holdMs=-5');
    expect(range.code).toBe(1);
    expect(range.stderr).toContain('holdMs: -5 is below 0');
    expect(salus(csvPath, '--memory', 'lots').stderr).toContain('--memory: invalid size "lots"');
    expect(salus().stderr).toContain('salus simulate needs one TRACE file (CSV or JSON)');
  });

  it('replays the job history: salus history --trace makes a trace salus simulate reads', () => {
    const dataDir = join(dir, 'data');
    const store = HistoryStore.open(dataDir);
    const runId = store.beginRun('/nowhere.sock', 1, '0.1.0', 1000);
    const job = (id: string, name: string, submittedAt: number, done: number, attainedMs: number): JobInfo => ({
      id, name, state: 'done', priority: 0, iterations: { done, total: done }, memory: { persistentBytes: 1 << 20, ephemeralPeakBytes: 1 << 20 },
      lane: null, submittedAt, startedAt: submittedAt, finishedAt: submittedAt + attainedMs, avgIterationMs: attainedMs / done, attainedMs, queuedMs: 0,
      error: null, pid: null, iterationSource: 'sdk',
    });
    const jobs = [job('job-1', 'long', 1000, 20, 2000), job('job-2', 'short', 1100, 2, 200)];
    jobs.forEach((info, i) => {
      store.insertJob(runId, i + 1, { ...info, state: 'queued' }, { name: info.name, file: null, args: [], hints: { iterations: info.iterations.done }, priority: 0 });
      store.updateJob(runId, info);
    });
    store.endRun(runId, 5000);
    store.close();
    // No service on this socket: the history is read from the data folder.
    const offline = { SALUS_SOCKET: join(dir, 'no.sock') };
    const trace = run(['history', '--trace', '--data-dir', dataDir], offline);
    expect(trace.code).toBe(0);
    expect(trace.stdout).toContain('name,arrivalS,iterations,iterationMs,persistentBytes,ephemeralBytes,priority\nlong,0,20,100,1048576,1048576,0\nshort,0.1,2,100,');
    const tracePath = join(dir, 'history.csv');
    writeFileSync(tracePath, trace.stdout);
    const out = JSON.parse(salus(tracePath, '--json', '--policy', 'FIFO,SRTF').stdout);
    // FIFO: short waits for long (2000 ms of work from 0 s): ends at 2200, arrived at 100. SRTF: short runs once
    // long's two measuring iterations are done (0–200), ending at 400.
    expect(out.policies[0].jobs.map((j: any) => j.jctMs)).toEqual([2000, 2100]);
    expect(out.policies[1].jobs.map((j: any) => j.jctMs)).toEqual([2200, 300]);
    expect(run(['history', '--trace', '--json', '--data-dir', dataDir], offline).stderr).toContain('--trace and --json each choose the output; give one');
  });
});
