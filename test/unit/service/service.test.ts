// The service's heart in-process, over the in-memory transport pair: jobs
// connect, wait for memory, are admitted, paused, resumed, killed and finish;
// every state change goes through the job table and is told to the job; the
// control handlers answer as `salus` and the panel see them.
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../core/protocol/messages.js';
import type { JobStateChange } from '../../../core/service/jobTable.js';
import type { ServiceEvent } from '../../../core/protocol/api.js';
import type { JobInfo } from '../../../core/protocol/state.js';
import { MiB, useService } from './harness.js';

const harness = useService();

/** Every state change of the service's jobs, as `id from→to`. */
function recordChanges(): string[] {
  const changes: string[] = [];
  harness.service.onDidChangeJob(({ job, from, to }: JobStateChange) => changes.push(`${job.id} ${from}→${to}`));
  return changes;
}

describe('a job over the in-memory transport', () => {
  it('is welcomed queued, admitted on requestDevice, and told so', async () => {
    harness.start();
    const changes = recordChanges();
    const { peer, jobId } = await harness.job({ hints: { iterations: 5 } });
    expect(jobId).toBe('job-1');
    expect(harness.service.jobInfos()).toMatchObject([{ id: 'job-1', name: 'test-job', state: 'queued', iterations: { done: 0, total: 5 } }]);
    const reply = await peer.requestDevice();
    expect(reply.error).toBeUndefined();
    expect(reply.result).toMatchObject({ limits: expect.any(Object), features: expect.any(Array) });
    expect(peer.states()).toEqual(['running']);
    expect(changes).toEqual(['job-1 queued→running']);
    const [info] = harness.service.jobInfos();
    expect(info.state).toBe('running');
    expect(info.lane).toMatch(/^lane-/);
    expect(info.startedAt).not.toBeNull();
  });

  it('answers a second device at once, and the first device of a waiting job only once admitted', async () => {
    harness.start({ capacityBytes: 8 * MiB });
    const { peer: holder } = await harness.job({ hints: { persistentBytes: 6 * MiB } });
    await holder.requestDevice();
    expect((await holder.requestDevice()).error).toBeUndefined();
    const { peer: waiter, jobId } = await harness.job({ hints: { persistentBytes: 4 * MiB } });
    waiter.send({ t: 'requestDevice', rid: 1 });
    waiter.send({ t: 'requestDevice', rid: 2 });
    const queued = await waiter.next((m) => m.t === 'state');
    expect(queued).toMatchObject({ state: 'queued', message: expect.stringMatching(/.+/) });
    expect(harness.service.jobInfos().find((j) => j.id === jobId)?.state).toBe('queued');
    holder.send({ t: 'goodbye', exitCode: 0 });
    holder.close();
    await waiter.next((m) => m.t === 'reply' && m.rid === 2, 'the second device');
    expect(waiter.received.filter((m) => m.t === 'reply').map((m) => (m as { rid: number }).rid)).toEqual([1, 2]);
    expect(waiter.states()).toEqual(['queued', 'running']);
    expect(harness.service.jobInfos().map((j) => [j.id, j.state])).toEqual([['job-1', 'done'], [jobId, 'running']]);
  });

  it('is refused, and failed, when it could not fit even on an empty GPU', async () => {
    harness.start({ capacityBytes: 8 * MiB });
    const finished: string[] = [];
    harness.service.onDidFinishJob((job) => finished.push(`${job.id} ${job.state}`));
    const { peer } = await harness.job({ hints: { persistentBytes: 64 * MiB } });
    const reply = await peer.requestDevice();
    expect(reply.error?.code).toBe(ErrorCode.Refused);
    expect(peer.states()).toEqual(['failed']);
    expect(finished).toEqual(['job-1 failed']);
    expect(harness.service.jobInfos()[0]).toMatchObject({ state: 'failed', error: reply.error?.message });
    // An ended job is never admitted again on its connection.
    const again = await peer.requestDevice().catch((error: Error) => error);
    expect(again instanceof Error ? again.message : again.error?.code).toBeTruthy();
  });

  it('is done when it says goodbye with 0 and hangs up; failed with another code', async () => {
    harness.start();
    const { peer: good } = await harness.job();
    await good.requestDevice();
    good.send({ t: 'goodbye', exitCode: 0 });
    good.close();
    const { peer: bad } = await harness.job();
    bad.send({ t: 'goodbye', exitCode: 3 });
    bad.close();
    await Promise.all([good.closed, bad.closed]);
    const jobs = harness.service.jobInfos();
    expect(jobs.map((j) => [j.id, j.state, j.error])).toEqual([['job-1', 'done', null], ['job-2', 'failed', 'the job exited with code 3']]);
    expect(jobs[0].finishedAt).not.toBeNull();
  });

  it('takes an exit reported for its process, after it hung up without a goodbye', async () => {
    harness.start();
    const { peer } = await harness.job({ pid: 424242 });
    peer.close();
    await peer.closed;
    expect(harness.service.jobInfos()[0].state).toBe('queued');
    harness.service.reportExit(424242, null, 'SIGKILL');
    expect(harness.service.jobInfos()[0]).toMatchObject({ state: 'failed', error: 'the job process was ended by SIGKILL' });
  });

  it('refuses GPU commands before its device, answering each request in the batch', async () => {
    harness.start();
    const { peer } = await harness.job();
    peer.send({ t: 'batch', cmds: [{ op: 'workDone', rid: 7 }] });
    const reply = await peer.next((m) => m.t === 'reply' && m.rid === 7);
    expect(reply).toMatchObject({ error: { code: ErrorCode.NotAllowed, message: 'GPU commands before requestDevice resolved' } });
  });
});

describe('control calls over the in-memory transport', () => {
  it('pause, resume and kill a job through the job table, telling the job each time', async () => {
    harness.start();
    const changes = recordChanges();
    const control = await harness.control();
    const { peer, jobId } = await harness.job();
    await peer.requestDevice();
    expect((await control.call('pauseJob', jobId)).error).toBeUndefined();
    expect((await control.call('resumeJob', jobId)).error).toBeUndefined();
    expect((await control.call('killJob', jobId)).result).toBeNull();
    await peer.closed;
    expect(peer.states()).toEqual(['running', 'paused', 'running', 'killed']);
    expect(peer.received.find((m) => m.t === 'lost')).toMatchObject({ reason: 'destroyed' });
    expect(changes).toEqual([`${jobId} queued→running`, `${jobId} running→paused`, `${jobId} paused→running`, `${jobId} running→killed`]);
    expect(harness.service.jobInfos()[0]).toMatchObject({ state: 'killed', error: null, lane: null, memory: { persistentBytes: 0 } });
    // Killing a job that ended is no error, and changes nothing.
    expect((await control.call('killJob', jobId)).error).toBeUndefined();
    expect(changes).toHaveLength(4);
  });

  it('kills a job that still waits for memory, taking it out of the queue', async () => {
    harness.start({ capacityBytes: 8 * MiB });
    const control = await harness.control();
    const { peer: holder } = await harness.job({ hints: { persistentBytes: 6 * MiB } });
    await holder.requestDevice();
    const { peer: waiter, jobId } = await harness.job({ hints: { persistentBytes: 4 * MiB } });
    waiter.send({ t: 'requestDevice', rid: 1 });
    await waiter.next((m) => m.t === 'state' && m.state === 'queued');
    await control.call('killJob', jobId);
    await waiter.closed;
    holder.send({ t: 'goodbye', exitCode: 0 });
    holder.close();
    await holder.closed;
    expect(harness.service.jobInfos().map((j) => j.state)).toEqual(['done', 'killed']);
    expect(waiter.received.some((m) => m.t === 'reply')).toBe(false);
  });

  it('say plainly why a state change cannot be made', async () => {
    harness.start();
    const control = await harness.control();
    const { jobId } = await harness.job();
    expect((await control.call('pauseJob', jobId)).error).toEqual({ code: ErrorCode.InvalidArgument, message: `${jobId} is queued; only a running job can be paused` });
    expect((await control.call('resumeJob', jobId)).error?.message).toBe(`${jobId} is queued; only a paused job can be resumed`);
    expect((await control.call('killJob', 'job-99')).error).toEqual({ code: ErrorCode.NotFound, message: "no job 'job-99' (see `salus jobs`)" });
  });

  it('check their arguments against the call table', async () => {
    harness.start();
    const control = await harness.control();
    expect((await control.call('setPolicy', 'lottery')).error?.message).toBe("unknown policy 'lottery': one of FIFO, SRTF, PACK, FAIR, PRIORITY");
    expect((await control.call('setPriority', 'job-1', 1e7)).error?.message).toMatch(/^setPriority: 1: /);
    expect((await control.call('killJob')).error?.message).toMatch(/^killJob: /);
    expect((await control.call('launchJob', { file: '/x.js', iterations: 3 })).error?.message).toMatch(/^launchJob: /);
    expect((await control.call('teleport')).error).toMatchObject({ code: ErrorCode.UnknownMethod, message: expect.stringMatching(/^unknown method 'teleport'; known: snapshot, jobs, /) });
  });

  it('answer the job table, memory map and policy, and change the policy by any case of its name', async () => {
    harness.start({ capacityBytes: 32 * MiB });
    const control = await harness.control();
    const { peer } = await harness.job({ hints: { priority: 2 } });
    await peer.requestDevice();
    expect((await control.call('jobs')).result).toMatchObject([{ id: 'job-1', state: 'running', priority: 2 }]);
    expect((await control.call('memory')).result).toMatchObject({ capacityBytes: 32 * MiB, lanes: [{ jobs: ['job-1'] }] });
    expect((await control.call('setPolicy', 'fair')).result).toMatchObject({ name: 'FAIR' });
    expect((await control.call('policy')).result).toMatchObject({ name: 'FAIR' });
    expect((await control.call('setPriority', 'job-1', 9)).error).toBeUndefined();
    expect(((await control.call('snapshot')).result as { jobs: JobInfo[] }).jobs[0].priority).toBe(9);
  });

  it('say what this service does not do: launch jobs (no launcher), keep history (none)', async () => {
    harness.start();
    const control = await harness.control();
    expect((await control.call('launchJob', { file: '/jobs/x.js' })).error).toEqual({ code: ErrorCode.NotAllowed, message: 'this service does not launch jobs' });
    expect((await control.call('uploadJob', 'x.js', 'export {}')).error?.code).toBe(ErrorCode.NotAllowed);
    expect((await control.call('history')).error?.message).toMatch(/keeps no job history/);
    expect((await control.call('clusterJobs')).result).toEqual({ available: false, reason: 'no Slurm in this test' });
  });

  it('relay output by process id, and ask the cluster through what composed the service', async () => {
    const cancelled: string[] = [];
    harness.start({}, { cancel: async (id) => { cancelled.push(id); } });
    const control = await harness.control();
    const { jobId } = await harness.job({ pid: 31337 });
    await control.call('appendOutput', 31337, 'epoch 1\n');
    expect((await control.call('jobOutput', jobId)).result).toBe('epoch 1\n');
    expect((await control.call('killClusterJob', '4101')).error).toBeUndefined();
    expect((await control.call('killClusterJob', '41; rm')).error?.message).toMatch(/^killClusterJob: 0: a Slurm job id/);
    expect(cancelled).toEqual(['4101']);
  });

  it('stream a snapshot, then coalesced changes and output, to a subscriber', async () => {
    harness.start();
    const control = await harness.control();
    await control.call('subscribe');
    const first = await control.next((m) => m.t === 'event');
    expect((first as { event: ServiceEvent }).event.type).toBe('snapshot');
    const { peer } = await harness.job({ pid: 5150 });
    await peer.requestDevice();
    await control.call('appendOutput', 5150, 'hello\n');
    const jobs = await control.next((m) => m.t === 'event' && m.event.type === 'jobs' && m.event.jobs.some((j) => j.state === 'running'), 'a jobs event');
    expect((jobs as { event: { jobs: JobInfo[] } }).event.jobs[0].id).toBe('job-1');
    await control.next((m) => m.t === 'event' && m.event.type === 'output' && m.event.text === 'hello\n', 'an output event');
  });
});

describe('a service with a history', () => {
  it('shows earlier runs\' jobs, numbers its own after them, lists history and refuses to act on the past', async () => {
    harness.start();
    const earlier = { id: 'job-7', name: 'old', state: 'done', fromEarlierRun: true } as unknown as JobInfo;
    const filters: unknown[] = [];
    harness.service.useHistory({
      earlierJobs: [earlier],
      firstJobNumber: 8,
      output: (id) => (id === 'job-7' ? 'old output\n' : null),
      list: (filter) => { filters.push(filter); return []; },
      measuredProfile: () => null,
    });
    const control = await harness.control();
    const { jobId } = await harness.job();
    expect(jobId).toBe('job-8');
    expect(((await control.call('jobs')).result as JobInfo[]).map((j) => j.id)).toEqual(['job-7', 'job-8']);
    expect((await control.call('jobOutput', 'job-7')).result).toBe('old output\n');
    expect((await control.call('killJob', 'job-7')).error).toEqual({ code: ErrorCode.NotAllowed, message: 'job-7 ended in an earlier run of the service' });
    expect((await control.call('history', { states: ['done'], limit: 5 })).result).toEqual([]);
    expect((await control.call('history', { states: ['gone'] })).error?.message).toMatch(/^history: 0\.states\.0: /);
    expect(filters).toEqual([{ states: ['done'], limit: 5 }]);
  });
});

describe('events of the service', () => {
  it('are typed and heard in order: open, identify, change, finish', async () => {
    harness.start();
    const heard: string[] = [];
    harness.service.onDidOpenJob((job) => heard.push(`open ${job.id}`));
    harness.service.onDidIdentifyJob(({ job, peer }) => heard.push(`identify ${job.id} ${peer === null ? 'unknown' : 'known'}`));
    harness.service.onDidChangeJob(({ job, to }) => heard.push(`${job.id} ${to}`));
    harness.service.onDidFinishJob((job) => heard.push(`finish ${job.id}`));
    const { peer } = await harness.job();
    await peer.requestDevice();
    await new Promise((resolve) => setTimeout(resolve, 20));
    peer.send({ t: 'goodbye', exitCode: 0 });
    peer.close();
    await peer.closed;
    // The OS cannot name the peer of an in-memory connection: identified as unknown.
    expect(heard).toEqual(['open job-1', 'identify job-1 unknown', 'job-1 running', 'job-1 done', 'finish job-1']);
  });
});
