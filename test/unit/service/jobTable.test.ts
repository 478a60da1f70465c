// The job table (core/service/jobTable.ts): the one writer of job state. Every
// change goes through JOB_TRANSITIONS, stamps its times and fires its events.
import { describe, expect, it } from 'vitest';
import { JOB_TRANSITIONS, JobTable, MAX_FINISHED_JOBS, type JobStateChange } from '../../../core/service/jobTable.js';
import { PROTOCOL_VERSION, type Hello } from '../../../core/protocol/messages.js';
import type { JobState } from '../../../core/protocol/state.js';

const STATES: JobState[] = ['queued', 'running', 'paused', 'done', 'failed', 'killed'];
const hello = (extra: Partial<Hello> = {}): Hello => ({ t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', ...extra });

/** A job of a fresh table, moved along `path` from `queued`. */
function jobAt(path: JobState[]) {
  const table = new JobTable();
  const job = table.open(hello(), null, 1000);
  path.forEach((state, i) => table.transition(job, state, 2000 + i));
  return { table, job };
}

describe('the job table', () => {
  it('opens jobs queued, numbered job-1, job-2, … and named by their hello', () => {
    const table = new JobTable();
    const first = table.open(hello({ name: 'train', pid: 42, hints: { priority: 3, iterations: 10 } }), null, 5);
    const second = table.open(hello(), null, 6);
    expect(first).toMatchObject({ id: 'job-1', name: 'train', state: 'queued', pid: 42, priority: 3, submittedAt: 5, startedAt: null, finishedAt: null });
    expect(second).toMatchObject({ id: 'job-2', name: 'job-2', priority: 0, pid: null });
    expect([...table.values()].map((job) => job.id)).toEqual(['job-1', 'job-2']);
  });

  it('goes on numbering from a history\'s next number', () => {
    const table = new JobTable();
    table.continueNumbering(41);
    expect(table.open(hello(), null).id).toBe('job-41');
    table.continueNumbering(3);
    expect(table.open(hello(), null).id).toBe('job-42');
  });

  describe.each(STATES)('from %s', (from) => {
    const pathTo: Record<JobState, JobState[]> = {
      queued: [], running: ['running'], paused: ['running', 'paused'], done: ['done'], failed: ['failed'], killed: ['killed'],
    };
    it.each(STATES)('to %s: as JOB_TRANSITIONS says', (to) => {
      const { table, job } = jobAt(pathTo[from]);
      if (JOB_TRANSITIONS[from].includes(to)) {
        table.transition(job, to);
        expect(job.state).toBe(to);
      } else {
        expect(() => table.transition(job, to)).toThrow(`cannot go from ${from} to ${to}`);
        expect(job.state).toBe(from);
      }
    });
  });

  it('never leaves a final state, and lets every live state end', () => {
    for (const state of ['done', 'failed', 'killed'] as const) expect(JOB_TRANSITIONS[state]).toEqual([]);
    for (const state of ['queued', 'running', 'paused'] as const) expect(JOB_TRANSITIONS[state]).toEqual(expect.arrayContaining(['done', 'failed', 'killed']));
  });

  it('stamps startedAt at the first running only, and finishedAt at the end (when its connection closed, if it did)', () => {
    const { table, job } = jobAt(['running', 'paused']);
    expect(job.startedAt).toBe(2000);
    table.transition(job, 'running', 9000);
    expect(job.startedAt).toBe(2000);
    job.closedAt = 9500;
    table.transition(job, 'failed', 9900);
    expect(job.finishedAt).toBe(9500);
    const other = jobAt(['killed']).job;
    expect(other.startedAt).toBeNull();
    expect(other.finishedAt).toBe(2000);
  });

  it('fires open, each change, then finish, in that order', () => {
    const table = new JobTable();
    const heard: string[] = [];
    table.onDidOpenJob((job) => heard.push(`open ${job.id}`));
    const stop = table.onDidChangeJob(({ job, from, to }: JobStateChange) => heard.push(`${job.id} ${from}→${to}`));
    table.onDidFinishJob((job) => heard.push(`finish ${job.id} ${job.state}`));
    const job = table.open(hello(), null);
    table.transition(job, 'running');
    table.transition(job, 'paused');
    table.transition(job, 'done');
    stop();
    const second = table.open(hello(), null);
    table.transition(second, 'killed');
    expect(heard).toEqual([
      'open job-1', 'job-1 queued→running', 'job-1 running→paused', 'job-1 paused→done', 'finish job-1 done',
      'open job-2', 'finish job-2 killed',
    ]);
  });

  it('finds a process\'s newest job, finished or not, and the live ones', () => {
    const table = new JobTable();
    const first = table.open(hello({ pid: 7 }), null);
    table.transition(first, 'done');
    const second = table.open(hello({ pid: 7 }), null);
    expect(table.newestByPid(7)).toBe(second);
    expect(table.live()).toEqual([second]);
    table.transition(second, 'failed');
    expect(table.newestByPid(7)).toBe(second);
    expect(table.newestByPid(8)).toBeUndefined();
    expect(table.live()).toEqual([]);
  });

  it(`keeps at most ${MAX_FINISHED_JOBS} finished jobs, dropping the oldest`, () => {
    const table = new JobTable();
    for (let i = 0; i < MAX_FINISHED_JOBS + 3; i += 1) table.transition(table.open(hello(), null), 'done');
    const live = table.open(hello(), null);
    const ids = [...table.values()].map((job) => job.id);
    expect(ids).toHaveLength(MAX_FINISHED_JOBS + 1);
    expect(table.has('job-3')).toBe(false);
    expect(table.has('job-4')).toBe(true);
    expect(ids.at(-1)).toBe(live.id);
  });
});
