/**
 * The job history fed by a real service (core/history/recorder.ts and index.ts):
 * a SalusService in-process (test/unit/service/harness.ts: SwiftShader, jobs over
 * the in-memory transport) writes to a real SQLite file in a temp folder, which
 * is then read back as `salus history` reads it: by a fresh store, by the next
 * start of the service, and with no service at all (core/history/offline.ts); and
 * how a job's iteration series is sampled (`addSample`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJobHistory } from '../../../core/history/index.js';
import { addSample, type HistoryRecorder } from '../../../core/history/recorder.js';
import { readHistoryOffline } from '../../../core/history/offline.js';
import { HistoryStore } from '../../../core/history/store.js';
import { HISTORY_SERIES_MAX_POINTS, type HistoryEntry } from '../../../core/protocol/history.js';
import { useService } from '../service/harness.js';

const harness = useService();
const SERVICE_KEY = '/run/test/salus.sock';
let dir: string;
let recorder: HistoryRecorder | null = null;
const log: string[] = [];

beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'salus-recorder-')); });
afterEach(() => {
  recorder?.close();
  recorder = null;
  log.length = 0;
  rmSync(dir, { recursive: true, force: true });
});

/** A service with its history in `dir`, as `salus serve` composes them. */
function startWithHistory(): HistoryRecorder {
  harness.start();
  recorder = openJobHistory({ dataDir: dir, serviceKey: SERVICE_KEY, version: '0.1.0', log: (line) => log.push(line) });
  expect(recorder, log.join('\n')).not.toBeNull();
  harness.service.useHistory(recorder!);
  recorder!.attach(harness.service);
  return recorder!;
}

/** What a fresh reader of the file sees, all runs, newest first. */
function onDisk(): HistoryEntry[] {
  const store = HistoryStore.open(dir);
  try {
    return store.list({}, SERVICE_KEY, null);
  } finally {
    store.close();
  }
}

describe('the history recorder', () => {
  it('has a finished job\'s final record on disk as soon as the service ends it: spec, state changes, output', async () => {
    startWithHistory();
    const { peer, jobId } = await harness.job({ name: 'trainer', pid: 4242, hints: { iterations: 7, priority: 2 } });
    await peer.requestDevice();
    await (await harness.control()).call('appendOutput', 4242, 'epoch 1 loss 0.5\n');
    peer.send({ t: 'goodbye', exitCode: 0 });
    peer.close();
    await peer.closed;
    const [entry] = onDisk();
    expect(entry).toMatchObject({ id: jobId, name: 'trainer', state: 'done', lost: false, spec: { name: 'trainer', hints: { iterations: 7 }, priority: 2 } });
    expect(entry.stateChanges.map((change) => change.state)).toEqual(['queued', 'running', 'done']);
    expect(entry.finishedAt).not.toBeNull();
    expect(recorder!.output(jobId)).toBe('epoch 1 loss 0.5\n');
  });

  it('keeps output relayed after the job ended (salus run forwards its last lines after the exit)', async () => {
    startWithHistory();
    const control = await harness.control();
    const { peer, jobId } = await harness.job({ pid: 5150 });
    peer.send({ t: 'goodbye', exitCode: 3 });
    peer.close();
    await peer.closed;
    await control.call('appendOutput', 5150, 'Traceback: the last words\n');
    expect(onDisk()[0]).toMatchObject({ id: jobId, state: 'failed', error: 'the job exited with code 3' });
    expect(recorder!.output(jobId)).toBe('Traceback: the last words\n');
  });

  it('lists this run\'s live jobs as the service sees them now, through the control call', async () => {
    startWithHistory();
    const { peer, jobId } = await harness.job({ name: 'live' });
    await peer.requestDevice();
    // On disk it may still be queued (states are written as the coalesced job table shows them); the list says running.
    const reply = await (await harness.control()).call('history', {});
    expect((reply.result as HistoryEntry[]).map((entry) => [entry.id, entry.state, entry.fromEarlierRun])).toEqual([[jobId, 'running', false]]);
  });
});

describe('the next start of the service', () => {
  it('shows the earlier run\'s jobs, fails those it left unfinished as lost, and numbers on', async () => {
    const first = startWithHistory();
    const { peer: done } = await harness.job({ name: 'finished' });
    done.send({ t: 'goodbye', exitCode: 0 });
    done.close();
    await done.closed;
    const { peer: cut } = await harness.job({ name: 'cut-short' });
    await cut.requestDevice();
    // The service's history stops with a job running: its run is over, the job's record unfinished.
    first.close();
    recorder = null;

    const next = openJobHistory({ dataDir: dir, serviceKey: SERVICE_KEY, version: '0.1.0', log: (line) => log.push(line) })!;
    recorder = next;
    expect(log.find((line) => /were lost with the service: job-2$/.test(line))).toBeDefined();
    expect(next.firstJobNumber).toBe(3);
    expect(next.earlierJobs.map((job) => [job.id, job.state, job.fromEarlierRun])).toEqual([['job-1', 'done', true], ['job-2', 'failed', true]]);
    expect(next.earlierJobs[1].error).toMatch(/^lost with the service: the service was stopped/);
    expect(onDisk().find((entry) => entry.id === 'job-2')).toMatchObject({ lost: true, state: 'failed' });
  });

  it('starts again the panel\'s launches whose jobs never started, and says so', async () => {
    const first = startWithHistory();
    const launched = first.launches.requested({ file: '/jobs/waiting.js', args: ['--lr', '0.1'] }, 'web');
    expect(launched).toBeDefined();
    first.close();
    recorder = null;

    const next = openJobHistory({ dataDir: dir, serviceKey: SERVICE_KEY, version: '0.1.0', log: (line) => log.push(line) })!;
    recorder = next;
    const requests: unknown[] = [];
    next.relaunchWaiting(async (request, caller) => { requests.push({ request, caller }); return { jobId: 'job-9' }; });
    await new Promise((resolve) => setImmediate(resolve));
    expect(requests).toEqual([{ request: { file: '/jobs/waiting.js', args: ['--lr', '0.1'] }, caller: 'web' }]);
    expect(log).toContain('salus: a launch of /jobs/waiting.js was started again as job-9');
    // Settled: a third start finds nothing left to start.
    next.relaunchWaiting(async () => { throw new Error('started twice'); });
    expect(log.filter((line) => line.includes('/jobs/waiting.js'))).toHaveLength(1);
  });

  it('runs without history, saying why, when the data folder cannot hold it', () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    expect(openJobHistory({ dataDir: file, serviceKey: SERVICE_KEY, version: '0.1.0', log: (line) => log.push(line) })).toBeNull();
    expect(log.at(-1)).toMatch(/^salus: job history is off, the service runs without it: /);
  });
});

describe('salus history with no service running', () => {
  it('reads the data folder, showing a job of a stopped run that never finished as lost', async () => {
    const first = startWithHistory();
    const { peer } = await harness.job({ name: 'orphan' });
    await peer.requestDevice();
    first.close();
    recorder = null;
    const [entry] = readHistoryOffline(dir, {});
    expect(entry).toMatchObject({ name: 'orphan', state: 'failed', lost: true, lane: null });
    expect(entry.error).toMatch(/^lost with the service: it is no longer running \(last recorded (queued|running)\)$/);
  });

  it('says so when the folder holds no history', () => {
    expect(() => readHistoryOffline(dir, {})).toThrow(`no service is running and ${dir} holds no job history`);
  });
});

describe('addSample', () => {
  it('samples at most once an interval, and thins a full series to every other point at half the rate', () => {
    const track = { series: [] as Array<{ at: number; itersDone: number; attainedMs: number }>, sampleIntervalMs: 1000 };
    addSample(track, { at: 0, itersDone: 0, attainedMs: 0 });
    addSample(track, { at: 500, itersDone: 5, attainedMs: 5 });
    expect(track.series).toHaveLength(1);
    addSample(track, { at: 500, itersDone: 5, attainedMs: 5 }, true);
    expect(track.series).toHaveLength(2);
    for (let i = 2; i <= HISTORY_SERIES_MAX_POINTS; i++) addSample(track, { at: i * 1000, itersDone: i * 10, attainedMs: i });
    expect(track.series.length).toBeLessThanOrEqual(HISTORY_SERIES_MAX_POINTS);
    expect(track.series.length).toBeGreaterThan(HISTORY_SERIES_MAX_POINTS / 2 - 2);
    expect(track.sampleIntervalMs).toBe(2000);
    expect(track.series.at(-1)?.itersDone).toBe(HISTORY_SERIES_MAX_POINTS * 10);
    expect(track.series[0].at).toBe(0);
  });
});
