/**
 * The history store on a real SQLite file in a temp folder: runs, lost jobs,
 * filters, retention, launches. (A writer killed mid-write: test/integration/history.test.ts.)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../../core/history/store.js';
import type { JobInfo, JobState } from '../../../core/protocol/state.js';
import type { JobSpec } from '../../../core/protocol/history.js';

const SERVICE = '/run/test/salus.sock';

function info(id: string, state: JobState, submittedAt: number, extra: Partial<JobInfo> = {}): JobInfo {
  return {
    id, name: `name-${id}`, state, priority: 0, iterations: { done: 0, total: null },
    memory: { persistentBytes: 0, ephemeralPeakBytes: 0 }, lane: null, submittedAt, startedAt: null, finishedAt: null,
    avgIterationMs: null, attainedMs: 0, queuedMs: 0, error: null, pid: 123, iterationSource: 'inferred', ...extra,
  };
}

const spec = (name: string): JobSpec => ({ name, file: null, args: [], hints: { iterations: 5 }, priority: 0 });

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-history-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('HistoryStore', () => {
  it('keeps jobs across reopening, marks unfinished ones of earlier runs lost, and numbers on', () => {
    const store = HistoryStore.open(dir);
    const run1 = store.beginRun(SERVICE, 1, '0.1.0', 1000);
    store.insertJob(run1, 1, info('job-1', 'queued', 1000), spec('a'));
    store.updateJob(run1, info('job-1', 'done', 1000, { startedAt: 1100, finishedAt: 2000, iterations: { done: 5, total: 5 }, avgIterationMs: 12.5 }),
      { series: [{ at: 1500, itersDone: 2, attainedMs: 25 }], output: 'hello\n', changes: [{ at: 2000, state: 'done', message: null }] });
    store.insertJob(run1, 2, info('job-2', 'queued', 1200), spec('b'));
    store.updateJob(run1, info('job-2', 'running', 1200, { startedAt: 1300 }), { changes: [{ at: 1300, state: 'running', message: null }] });
    store.insertJob(run1, 3, info('job-3', 'queued', 1400), spec('c'));
    store.touchRun(run1, 2500);
    store.close(); // as if killed: no endRun

    const again = HistoryStore.open(dir);
    expect(again.integrityOk()).toBe(true);
    const run2 = again.beginRun(SERVICE, 2, '0.1.0', 3000);
    expect(run2).toBeGreaterThan(run1);
    const lost = again.markLostJobs(SERVICE, run2);
    expect(lost).toEqual([{ runId: run1, id: 'job-2', started: true }, { runId: run1, id: 'job-3', started: false }]);
    expect(again.nextJobNumber(SERVICE)).toBe(4);
    expect(again.nextJobNumber('/another.sock')).toBe(1);

    const earlier = again.earlierJobs(SERVICE, run2, 100);
    expect(earlier.map((j) => [j.id, j.state, j.fromEarlierRun, j.runId])).toEqual([
      ['job-1', 'done', true, run1], ['job-2', 'failed', true, run1], ['job-3', 'failed', true, run1],
    ]);
    expect(earlier[1].error).toMatch(/lost with the service: the service ended unexpectedly while the job ran/);
    expect(earlier[2].error).toMatch(/waited to start/);
    expect(earlier[1].finishedAt).toBe(2500);
    expect(again.output(SERVICE, 'job-1')).toBe('hello\n');

    const [done] = again.list({ name: 'name-job-1' }, SERVICE, run2);
    expect(done).toMatchObject({ id: 'job-1', state: 'done', lost: false, fromEarlierRun: true, avgIterationMs: 12.5, spec: { name: 'a', hints: { iterations: 5 } } });
    expect(done.stateChanges.map((c) => c.state)).toEqual(['queued', 'done']);
    expect(done.iterationSeries).toEqual([{ at: 1500, itersDone: 2, attainedMs: 25 }]);
    const [gone] = again.list({ name: 'name-job-2' }, SERVICE, run2);
    expect(gone.lost).toBe(true);
    expect(gone.stateChanges.map((c) => c.state)).toEqual(['queued', 'running', 'failed']);
    // A second start finds nothing more to mark.
    expect(again.markLostJobs(SERVICE, again.beginRun(SERVICE, 3, '0.1.0'))).toEqual([]);
    again.close();
  });

  it('says a stopped run stopped, not died', () => {
    const store = HistoryStore.open(dir);
    const run1 = store.beginRun(SERVICE, 1, '0.1.0', 1000);
    store.insertJob(run1, 1, info('job-1', 'queued', 1000), spec('a'));
    store.endRun(run1, 1800);
    const run2 = store.beginRun(SERVICE, 2, '0.1.0', 3000);
    store.markLostJobs(SERVICE, run2);
    expect(store.earlierJobs(SERVICE, run2, 10)[0]).toMatchObject({ state: 'failed', finishedAt: 1800, error: expect.stringMatching(/the service was stopped/) });
    store.close();
  });

  it('filters by state, name glob and time, newest first, with a limit', () => {
    const store = HistoryStore.open(dir);
    const run = store.beginRun(SERVICE, 1, '0.1.0', 0);
    const states: JobState[] = ['done', 'failed', 'killed', 'done', 'done'];
    states.forEach((state, i) => {
      store.insertJob(run, i + 1, info(`job-${i + 1}`, 'queued', 1000 * (i + 1), { name: i % 2 ? `sweep-${i}` : `train-${i}` }), spec('x'));
      store.updateJob(run, info(`job-${i + 1}`, state, 1000 * (i + 1), { name: i % 2 ? `sweep-${i}` : `train-${i}`, finishedAt: 1000 * (i + 1) + 500 }));
    });
    // Another service (socket) keeps its own jobs in the same file; they are not this one's history.
    store.insertJob(store.beginRun('/run/test/desktop.sock', 9, '0.1.0', 0), 9, info('job-9', 'done', 9000, { name: 'train-9' }), spec('x'));
    const ids = (filter: Parameters<HistoryStore['list']>[0]) => store.list(filter, SERVICE, run).map((e) => e.id);
    expect(ids({})).toEqual(['job-5', 'job-4', 'job-3', 'job-2', 'job-1']);
    expect(ids({ states: ['done'] })).toEqual(['job-5', 'job-4', 'job-1']);
    expect(ids({ states: ['failed', 'killed'] })).toEqual(['job-3', 'job-2']);
    expect(ids({ name: 'sweep-*' })).toEqual(['job-4', 'job-2']);
    expect(ids({ name: 'SWEEP-*' })).toEqual([]);
    expect(ids({ sinceMs: 3000 })).toEqual(['job-5', 'job-4', 'job-3']);
    expect(ids({ states: ['done'], sinceMs: 3000, limit: 1 })).toEqual(['job-5']);
    expect(store.list({}, SERVICE, run)[0].fromEarlierRun).toBe(false);
    store.close();
  });

  it('keeps only what the retention allows', () => {
    const store = HistoryStore.open(dir);
    const run = store.beginRun(SERVICE, 1, '0.1.0', 0);
    for (let n = 1; n <= 10; n++) store.insertJob(run, n, info(`job-${n}`, 'queued', n * 1000), spec('x'));
    expect(store.prune({ maxJobs: 6, maxAgeMs: 1e12 }, 20_000)).toBe(4);
    expect(store.list({ limit: 100 }, SERVICE, run).map((e) => e.id).at(-1)).toBe('job-5');
    expect(store.prune({ maxJobs: 100, maxAgeMs: 12_000 }, 20_000)).toBe(3); // submitted before 8000
    expect(store.list({ limit: 100 }, SERVICE, run).map((e) => e.id)).toEqual(['job-10', 'job-9', 'job-8']);
    store.close();
  });

  it('keeps launch requests until their jobs start', () => {
    const store = HistoryStore.open(dir);
    const run1 = store.beginRun(SERVICE, 1, '0.1.0', 0);
    const started = store.addLaunch(run1, { file: '/jobs/a.js' }, 'local');
    const waiting = store.addLaunch(run1, { file: '/jobs/b.js', args: ['--x'], name: 'b' }, 'web');
    const neverConnected = store.addLaunch(run1, { file: '/jobs/c.js' }, 'local');
    store.linkLaunch(started, 'job-1');
    store.settleLaunch(started, 'started');
    store.linkLaunch(waiting, 'job-2');
    store.settleLaunch(neverConnected, 'failed');
    const run2 = store.beginRun(SERVICE, 2, '0.1.0', 10);
    expect(store.waitingLaunches(SERVICE, run2)).toEqual([
      { launchId: waiting, runId: run1, request: { file: '/jobs/b.js', args: ['--x'], name: 'b' }, caller: 'web', attempt: 1, jobId: 'job-2' },
    ]);
    store.settleLaunch(waiting, 'relaunched');
    expect(store.waitingLaunches(SERVICE, run2)).toEqual([]);
    store.insertJob(run1, 2, info('job-2', 'failed', 5, { error: 'lost with the service' }), spec('b'));
    expect(store.appendError(run1, 'job-2', 'was started again as job-4')).toBe('lost with the service; was started again as job-4');
    expect(store.list({}, SERVICE, run2)[0].error).toBe('lost with the service; was started again as job-4');
    expect(store.appendError(run1, 'job-99', 'x')).toBeNull();
    store.close();
  });

  it('makes its file private and refuses a newer schema', () => {
    const store = HistoryStore.open(join(dir, 'data'));
    expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    store.close();
    const raw = new Database(store.file);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => HistoryStore.open(join(dir, 'data'))).toThrow(/newer Salus \(schema 99.*another --data-dir/);
  });
});

describe('a damaged history file', () => {
  it('is kept aside and a new history begun, saying so', () => {
    writeFileSync(join(dir, 'history.sqlite3'), 'not a database, but somebody’s bytes'.repeat(200));
    const notes: string[] = [];
    const store = HistoryStore.open(dir, (line) => notes.push(line));
    expect(store.integrityOk()).toBe(true);
    expect(store.list({}, SERVICE, null)).toEqual([]);
    store.close();
    const aside = readdirSync(dir).filter((name) => name.startsWith('history.sqlite3.damaged-'));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(dir, aside[0]), 'utf8')).toMatch(/^not a database/);
    expect(notes).toEqual([expect.stringMatching(/was not a sound database .*kept it as .*damaged-.* and began a new history/)]);
  });
});

describe('measuredProfile', () => {
  it('is the newest clean done run of the same file and arguments that measured memory', () => {
    const store = HistoryStore.open(dir);
    const run = store.beginRun(SERVICE, 1, '0.1.0', 1000);
    const trained = (memory: Partial<JobInfo['memory']>, extra: Partial<JobInfo> = {}) =>
      ({ memory: { persistentBytes: 0, ephemeralPeakBytes: 0, ...memory }, ...extra });
    const runOf = (n: number, file: string, args: string[], state: JobState, extra: Partial<JobInfo>) => {
      store.insertJob(run, n, info(`job-${n}`, 'queued', 1000 * n), { ...spec(`j${n}`), file, args });
      store.updateJob(run, info(`job-${n}`, state, 1000 * n, extra));
    };
    runOf(1, '/jobs/train.js', ['--lr', '0.1'], 'done', trained({ stateBytes: 1000, ephemeralPeakBytes: 9000 }));
    runOf(2, '/jobs/train.js', ['--lr', '0.2'], 'done', trained({ stateBytes: 2000, ephemeralPeakBytes: 8000 }));
    runOf(3, '/jobs/train.js', ['--lr', '0.1'], 'failed', trained({ stateBytes: 3000, ephemeralPeakBytes: 7000 }));
    runOf(4, '/jobs/train.js', ['--lr', '0.1'], 'done', trained({ stateBytes: 4000, ephemeralPeakBytes: 6000 }, { gpuErrors: { count: 2, first: null } }));
    runOf(5, '/jobs/train.js', ['--lr', '0.1'], 'done', trained({}));
    // Newest first, skipping a failed run, one with GPU errors and one that measured nothing; arguments must match exactly.
    expect(store.measuredProfile('/jobs/train.js', ['--lr', '0.1'])).toEqual({ jobId: 'job-1', runId: run, persistentBytes: 1000, ephemeralBytes: 9000 });
    expect(store.measuredProfile('/jobs/train.js', ['--lr', '0.2'])?.jobId).toBe('job-2');
    expect(store.measuredProfile('/jobs/train.js', ['--lr'])).toBeNull();
    expect(store.measuredProfile('/jobs/other.js', ['--lr', '0.1'])).toBeNull();
    store.close();
  });
});
