/**
 * Job history against real `salus serve` processes with `--data-dir` in a temp
 * folder: jobs outlive a restart, `kill -9` of the service loses no finished
 * job's record, queued launches are started again, and `salus history` filters.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT, startServicePerTest, type TestService } from '../helpers/service.js';
import { until } from '../helpers/rawSocket.js';

const STEPS = join(ROOT, 'test/fixtures/jobs/steps.js');
const THROWS = join(ROOT, 'test/fixtures/jobs/throws.js');

const startService = startServicePerTest();
/** A service for this test (stopped after it), with its job history in `dir`'s when given. */
function serve(args: string[], dir?: string): Promise<TestService> {
  return startService(args, {}, { dir });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('job history across restarts', () => {
  it('shows the jobs of an earlier run after a restart, and `salus history` filters them', async () => {
    const first = await serve(['--memory', '256MiB']);
    for (const name of ['alpha', 'beta-1']) {
      const job = first.startJob(['--name', name, '--iterations', '4', STEPS, '--', '--iterations', '4']);
      expect((await job.done).code).toBe(0);
    }
    expect((await first.startJob(['--name', 'broken', THROWS]).done).code).not.toBe(0);
    await first.waitForJobs((jobs) => jobs.filter((j) => ['done', 'failed'].includes(j.state)).length === 3);
    await first.stop({ keepDir: true });

    const second = await serve(['--memory', '256MiB'], first.dir);
    const jobs = await second.json<any[]>(['jobs']);
    expect(jobs.map((j) => [j.id, j.name, j.state, j.fromEarlierRun, j.runId])).toEqual([
      ['job-1', 'alpha', 'done', true, 1], ['job-2', 'beta-1', 'done', true, 1], ['job-3', 'broken', 'failed', true, 1],
    ]);
    expect(jobs[0]).toMatchObject({ iterations: { done: 4, total: 4 }, lane: null });
    expect(jobs[0].avgIterationMs).toBeGreaterThan(0);
    expect(jobs[2].error).toMatch(/exited with code/);
    expect((await second.cli(['jobs'])).stdout).toMatch(/alpha\s+done \(earlier run\)/);

    // The earlier job's output and a clear answer for controlling it.
    const control = await second.control();
    expect(await control.call<string>('jobOutput', 'job-1')).toMatch(/"done":true/);
    expect((await second.cli(['logs', 'job-1'])).stdout).toMatch(/"done":true/);
    await expect(control.call('killJob', 'job-1')).rejects.toThrow(/job-1 ended in an earlier run of the service/);

    // Numbers go on: the new job is job-4, of run 2.
    expect((await second.startJob(['--name', 'gamma', STEPS, '--', '--iterations', '3']).done).code).toBe(0);
    const all = await second.json<any[]>(['history']);
    expect(all.map((e) => [e.id, e.runId, e.fromEarlierRun])).toEqual([['job-4', 2, false], ['job-3', 1, true], ['job-2', 1, true], ['job-1', 1, true]]);
    expect(all[3]).toMatchObject({ lost: false, spec: { name: 'alpha', hints: { iterations: 4 } } });
    expect(all[3].stateChanges.map((c: any) => c.state)).toEqual(['queued', 'running', 'done']);
    expect(all[3].iterationSeries.at(-1)).toMatchObject({ itersDone: 4 });

    const ids = async (args: string[]) => (await second.json<any[]>(['history', ...args])).map((e) => e.id);
    expect(await ids(['--state', 'done'])).toEqual(['job-4', 'job-2', 'job-1']);
    expect(await ids(['--state', 'failed,killed'])).toEqual(['job-3']);
    expect(await ids(['--name', 'beta*'])).toEqual(['job-2']);
    expect(await ids(['--since', '10m', '--limit', '2'])).toEqual(['job-4', 'job-3']);
    expect(await ids(['--since', '1s', '--name', 'alpha'])).toEqual([]);
    const text = await second.cli(['history', '--state', 'done']);
    expect(text.stdout).toMatch(/^ID\s+RUN\s+NAME\s+STATE/);
    expect(text.stdout).toMatch(/job-4\s+2 \(now\)\s+gamma\s+done/);
    const bad = await second.cli(['history', '--state', 'finished']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--state finished: a state is one of queued, running, paused, done, failed, killed/);
    const soon = await second.cli(['history', '--since', 'soon']);
    expect(soon.code).toBe(2);
    expect(soon.stderr).toMatch(/'soon' is not a duration/);
  });

  it('keeps the file and arguments a `salus run` job started with, clipped when they are long', async () => {
    const service = await serve(['--memory', '256MiB']);
    const plainRun = await service.startJob(['--name', 'plain', STEPS, '--', '--iterations', '2']).done;
    expect(plainRun.code, plainRun.stderr).toBe(0);
    const long = Array.from({ length: 40 }, (_, i) => `${i}:${'é'.repeat(1500)}`);
    const wordyRun = await service.startJob(['--name', 'wordy', STEPS, '--', '--iterations', '2', ...long]).done;
    expect(wordyRun.code, wordyRun.stderr).toBe(0);
    const [wordy, plain] = await service.json<any[]>(['history']);
    expect(plain.spec).toEqual({ name: 'plain', file: STEPS, args: ['--iterations', '2'], hints: {}, priority: 0 });
    expect(wordy).toMatchObject({ state: 'done', spec: { file: STEPS } });
    expect(wordy.spec.args.slice(0, 3)).toEqual(['--iterations', '2', `0:${'é'.repeat(1022)}`]);
    expect(wordy.spec.args.length).toBeLessThan(long.length);
  });

  it('loses no finished job when the service is killed with SIGKILL while jobs finish and run', async () => {
    const first = await serve(['--memory', '512MiB', '--policy', 'pack']);
    const long = first.startJob(['--name', 'long', STEPS, '--', '--iterations', '1000000', '--work', '4']);
    const running = await first.waitForJobs((jobs) => jobs.find((j) => j.name === 'long' && j.iterations.done >= 2));
    const runningSeenAt = Date.now();
    // A stream of short jobs, two at a time, so records are being written when the kill comes.
    let stop = false;
    const stream = (async () => {
      for (let n = 0; !stop; n++) {
        await Promise.all([0, 1].map((k) => first.startJob(['--name', `short-${n}-${k}`, STEPS, '--', '--iterations', '3']).done));
      }
    })();
    const done = await first.waitForJobs((jobs) => {
      const finished = jobs.filter((j) => j.state === 'done');
      return finished.length >= 6 && finished;
    }, 90_000);
    // Past one progress checkpoint (every 5 s) since the long job had run: the kill must find it recorded.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 5500 - (Date.now() - runningSeenAt))));
    await first.stop({ keepDir: true, signal: 'SIGKILL' });
    stop = true;
    await stream;
    await long.done;

    // With no service running, `salus history` reads the data folder as the kill left it.
    const offline = await first.cli(['history', '--json', '--limit', '1000', '--data-dir', join(first.dir, 'data')]);
    expect(offline.stderr).toMatch(/no service is running; the history in .*data:/);
    const left = new Map((JSON.parse(offline.stdout) as any[]).map((e) => [e.id, e]));
    for (const job of done) expect(left.get(job.id), job.id).toMatchObject({ state: 'done' });
    expect(left.get(running.id)).toMatchObject({ state: 'failed', lost: true, error: 'lost with the service: it is no longer running (last recorded running)' });

    const second = await serve(['--memory', '512MiB'], first.dir);
    const after = new Map((await second.json<any[]>(['history', '--limit', '1000'])).map((e) => [e.id, e]));
    for (const job of done) {
      expect(after.get(job.id), job.id).toMatchObject({ state: 'done', name: job.name, iterations: { done: 3 }, lost: false, fromEarlierRun: true });
    }
    expect(after.get(running.id)).toMatchObject({
      state: 'failed', lost: true, error: expect.stringMatching(/^lost with the service: the service ended unexpectedly while the job ran/),
    });
    // Its progress is as of its last checkpoint (every 5 s): it ran.
    expect(after.get(running.id)!.iterations.done).toBeGreaterThanOrEqual(1);
    expect(after.get(running.id)!.startedAt).toBe(running.startedAt);
    for (const entry of after.values()) expect(['done', 'failed']).toContain(entry.state);
  }, 180_000);

  it('starts again a launched job that was still queued when the service died', async () => {
    const first = await serve(['--memory', '64MiB']);
    const control = await first.control();
    const big = { persistentBytes: 40 * 1024 * 1024 };
    const holder = await control.call<{ jobId: string }>('launchJob', { file: STEPS, name: 'holder', args: ['--iterations', '1000000', '--work', '4'], hints: big });
    await first.waitForJobs((jobs) => jobs.find((j) => j.id === holder.jobId && j.state === 'running'));
    // The waiter runs from an uploaded copy, which the service removes once a job launched from it ends.
    const upload = await control.call<{ file: string }>('uploadJob', 'waiter.js', readFileSync(STEPS, 'utf8'));
    const waiter = await control.call<{ jobId: string }>('launchJob', { file: upload.file, name: 'waiter', args: ['--iterations', '3'], hints: big });
    const queued = await first.waitForJobs((jobs) => jobs.find((j) => j.id === waiter.jobId && j.state === 'queued'));
    const pids = (await first.json<any[]>(['jobs'])).map((j) => j.pid as number);
    await first.stop({ keepDir: true, signal: 'SIGKILL' });
    // The jobs hear their socket close and exit.
    await until(() => pids.every((pid) => !alive(pid)), 'the jobs to exit', 30_000);

    const second = await serve(['--memory', '64MiB'], first.dir);
    const again = await second.waitForJobs((jobs) => jobs.find((j) => !j.fromEarlierRun && j.name === 'waiter' && j.state === 'done'), 60_000);
    expect(again.id).toBe('job-3');
    const jobs: any[] = await second.waitForJobs((list) => list.find((j) => j.id === queued.id && /started again/.test(j.error ?? '')) && list);
    expect(jobs.find((j) => j.id === queued.id)).toMatchObject({
      fromEarlierRun: true, state: 'failed', error: `lost with the service: the service ended unexpectedly while the job waited to start; was started again as ${again.id}`,
    });
    // The job that had run is not run again.
    expect(jobs.find((j) => j.id === holder.jobId)).toMatchObject({ state: 'failed', error: expect.stringMatching(/while the job ran$/) });
    expect(jobs.filter((j) => j.name === 'holder')).toHaveLength(1);
    const [entry] = await second.json<any[]>(['history', '--name', 'waiter', '--state', 'done']);
    expect(entry.spec).toMatchObject({ file: upload.file, args: ['--iterations', '3'], hints: big });
    await until(() => !existsSync(upload.file), 'the uploaded file to be removed', 30_000);
  }, 120_000);
});

describe('the history store under SIGKILL', () => {
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loses no committed record when its process is killed mid-write', async () => {
    dir = mkdtempSync(join(tmpdir(), 'salus-history-kill-'));
    // A writer records jobs as fast as it can and prints each id once its write returned.
    const storeUrl = pathToFileURL(join(ROOT, 'dist/core/history/store.js')).href;
    const writer = `
      const { HistoryStore } = await import(${JSON.stringify(storeUrl)});
      const store = HistoryStore.open(${JSON.stringify(dir)});
      const run = store.beginRun('s', process.pid, '0');
      const blob = 'x'.repeat(20000);
      for (let n = 1; ; n++) {
        const info = { id: 'job-' + n, name: 'w', state: 'queued', priority: 0, iterations: { done: n, total: null },
          memory: { persistentBytes: 0, ephemeralPeakBytes: 0 }, lane: null, submittedAt: n, startedAt: n, finishedAt: null,
          avgIterationMs: 1, attainedMs: n, queuedMs: 0, error: null, pid: 1, iterationSource: 'inferred' };
        store.insertJob(run, n, info, { name: 'w', file: null, args: [], hints: {}, priority: 0 });
        store.updateJob(run, { ...info, state: 'done', finishedAt: n }, { output: blob + n, changes: [{ at: n, state: 'done', message: null }] });
        process.stdout.write('committed ' + n + '\\n');
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', writer], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const target = 30 + Math.floor(Math.random() * 30);
    await until(() => (out.match(/committed/g) ?? []).length >= target || child.exitCode !== null, 'the writer to commit', 30_000);
    expect(err).toBe('');
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    const committed = [...out.matchAll(/committed (\d+)/g)].map((m) => Number(m[1]));

    const { HistoryStore } = await import(storeUrl);
    const store = HistoryStore.open(dir);
    expect(store.integrityOk()).toBe(true);
    const kept = new Map((store.list({ limit: 100_000 }, 's', null) as any[]).map((e) => [e.id, e]));
    for (const n of committed) expect(kept.get(`job-${n}`)?.state, `job-${n}`).toBe('done');
    expect(store.output('s', `job-${committed.at(-1)}`)).toBe(`${'x'.repeat(20000)}${committed.at(-1)}`);
    // Past the last printed one, at most the write in flight: whole (queued, or done) or not at all.
    expect(kept.size).toBeLessThanOrEqual(committed.length + 1);
    for (const entry of kept.values()) expect(['queued', 'done']).toContain(entry.state);
    store.close();
  });
});
