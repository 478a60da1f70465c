// Notifications with a fake Notification class: which job changes are news,
// what they say, and what a click does.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { ServiceEvent } from '../../../core/protocol/api.js';
import type { JobInfo, JobState, ServiceSnapshot } from '../../../core/protocol/state.js';
import type { ServiceStatus } from '../../../electron/desktopApi.js';
import { JobFinishWatch, jobNotification, setupNotifications } from '../../../electron/notifications.js';

function job(id: string, state: JobState, extra: Partial<JobInfo> = {}): JobInfo {
  return {
    id, name: `job ${id}`, state, priority: 0, iterations: { done: 3, total: 3 },
    memory: { persistentBytes: 0, ephemeralPeakBytes: 0 }, lane: null, submittedAt: 0, startedAt: 1_000, finishedAt: 4_500,
    avgIterationMs: 10, attainedMs: 30, queuedMs: 0, error: null, pid: null, iterationSource: 'inferred', ...extra,
  };
}
const snapshot = (jobs: JobInfo[]): ServiceEvent => ({ type: 'snapshot', snapshot: { jobs } as ServiceSnapshot });
const jobs = (list: JobInfo[]): ServiceEvent => ({ type: 'jobs', jobs: list });

describe('JobFinishWatch', () => {
  it('reports each job once, when it reaches done or failed after the baseline', () => {
    const watch = new JobFinishWatch();
    expect(watch.observe(jobs([job('early', 'running')]))).toEqual([]); // no baseline yet
    expect(watch.observe(snapshot([job('a', 'running'), job('old', 'done'), job('q', 'queued')]))).toEqual([]);
    expect(watch.observe(jobs([job('a', 'running'), job('old', 'done'), job('q', 'running')]))).toEqual([]);
    expect(watch.observe(jobs([job('a', 'done'), job('old', 'done'), job('q', 'failed')])).map((j) => j.id)).toEqual(['a', 'q']);
    expect(watch.observe(jobs([job('a', 'done'), job('q', 'failed')]))).toEqual([]);
    // A job that ran and ended between two updates is still news; a killed one is not.
    expect(watch.observe(jobs([job('fast', 'done'), job('k', 'killed')])).map((j) => j.id)).toEqual(['fast']);
    expect(watch.observe({ type: 'metrics', at: 0, busyShare: 0, queueLength: 0, iterationsPerSecond: {} })).toEqual([]);
  });

  it('takes no jobs of an earlier run of the service (its history) for news', () => {
    const watch = new JobFinishWatch();
    watch.observe(snapshot([]));
    const earlier = [job('job-1', 'failed', { fromEarlierRun: true, runId: 1 }), job('job-2', 'done', { fromEarlierRun: true, runId: 1 })];
    expect(watch.observe(jobs([...earlier, job('job-3', 'done')])).map((j) => j.id)).toEqual(['job-3']);
  });

  it('starts over from a new snapshot (a restarted service)', () => {
    const watch = new JobFinishWatch();
    watch.observe(snapshot([job('a', 'running')]));
    expect(watch.observe(snapshot([job('a', 'done')]))).toEqual([]);
  });
});

describe('jobNotification', () => {
  it('says what happened, in words', () => {
    expect(jobNotification(job('a', 'done', { name: 'mnist' }))).toEqual({ title: 'Job finished: mnist', body: '3 iterations in 3.5 s.' });
    expect(jobNotification(job('b', 'failed', { name: 'bert', error: 'out of memory' }))).toEqual({ title: 'Job failed: bert', body: 'out of memory' });
  });
});

class FakeNotification extends EventEmitter {
  static shown: FakeNotification[] = [];
  static supported = true;
  static isSupported() { return FakeNotification.supported; }
  constructor(readonly options: { title: string; body: string }) { super(); }
  show() { FakeNotification.shown.push(this); }
}

describe('setupNotifications', () => {
  const client = new EventEmitter();
  const supervisor = new EventEmitter();
  const calls: string[] = [];
  const window = {
    show: () => { calls.push('show'); return null as never; },
    push: (channel: string, payload: unknown) => { calls.push(`${channel}:${String(payload)}`); },
  };
  setupNotifications({ Notification: FakeNotification, client, supervisor, window });

  it('notifies a finished job; a click brings the window and selects it', () => {
    client.emit('event', snapshot([job('j1', 'running')]));
    client.emit('event', jobs([job('j1', 'done', { name: 'resnet' })]));
    expect(FakeNotification.shown.map((n) => n.options.title)).toEqual(['Job finished: resnet']);
    FakeNotification.shown[0].emit('click');
    expect(calls).toEqual(['show', 'selectJob:j1']);
  });

  it('notifies the first crash of a streak only', () => {
    FakeNotification.shown = [];
    const status = (consecutiveFailures: number): ServiceStatus => ({
      state: 'restarting', pid: null, socketPath: 's', restarts: 0, consecutiveFailures, restartInMs: 500, message: 'the Salus service stopped unexpectedly (exit code 3)',
    });
    supervisor.emit('status', status(1));
    supervisor.emit('status', status(2));
    supervisor.emit('status', { ...status(0), state: 'running' });
    expect(FakeNotification.shown.map((n) => [n.options.title, n.options.body])).toEqual([
      ['The Salus service stopped', 'the Salus service stopped unexpectedly (exit code 3)'],
    ]);
  });

  it('stays quiet where the OS has no notifications', () => {
    FakeNotification.shown = [];
    FakeNotification.supported = false;
    client.emit('event', jobs([job('j2', 'running')]));
    client.emit('event', jobs([job('j2', 'failed')]));
    expect(FakeNotification.shown).toEqual([]);
    FakeNotification.supported = true;
  });
});
