/**
 * `/metrics`' series (core/bridge/prometheus.ts, iterationHistogram.ts) read from
 * a real service in-process (test/unit/service/harness.ts: SwiftShader, jobs over
 * the in-memory transport): values come from the service at each scrape, a job's
 * series follow its labels of now (no stale `state="running"` once it paused or
 * ended), and iterations are counted as the scheduler grants and finishes them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServiceMetrics, type ServiceMetrics } from '../../../core/bridge/prometheus.js';
import { ITERATION_BUCKETS_SECONDS, IterationHistogram } from '../../../core/bridge/iterationHistogram.js';
import type { Peer } from '../service/harness.js';
import { MiB, useService } from '../service/harness.js';

const harness = useService();
let metrics: ServiceMetrics | null = null;
afterEach(() => {
  metrics?.dispose();
  metrics = null;
});

/** The samples of `name` in one scrape, as `{labels} value` strings (prom-client prints an unsampled gauge `Nan`, so no strict parse). */
async function series(name: string): Promise<string[]> {
  const text = await metrics!.text();
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `)).map((line) => line.slice(name.length));
}

/** One SDK-marked iteration of `peer` with no GPU work; resolves once the service ended it. */
async function iterate(peer: Peer, rid: number): Promise<void> {
  peer.send({ t: 'batch', cmds: [{ op: 'iterationBegin' }, { op: 'iterationEnd', rid }] });
  await peer.next((m) => m.t === 'reply' && m.rid === rid, `the end of iteration ${rid}`);
}

describe('the service\'s metrics', () => {
  it('read capacity, use and jobs by state at each scrape', async () => {
    harness.start({ capacityBytes: 32 * MiB });
    metrics = createServiceMetrics(harness.service);
    expect(await series('salus_gpu_memory_total_bytes')).toEqual([`{gpu="0"} ${32 * MiB}`]);
    expect(await series('salus_jobs')).toContain('{state="queued"} 0');
    const { peer } = await harness.job({ hints: { ephemeralBytes: 4 * MiB } });
    expect(await series('salus_jobs')).toContain('{state="queued"} 1');
    await peer.requestDevice();
    expect(await series('salus_jobs')).toEqual(expect.arrayContaining(['{state="queued"} 0', '{state="running"} 1']));
    const used = Number((await series('salus_gpu_memory_used_bytes'))[0].split(' ')[1]);
    expect(used).toBe(harness.service.memoryMap().usedBytes);
    // Its lane, sized for the declared ephemeral bytes, counts against capacity.
    expect(used).toBeGreaterThanOrEqual(4 * MiB);
  });

  it('keep one series per job, under its labels of now', async () => {
    harness.start();
    metrics = createServiceMetrics(harness.service);
    const { peer, jobId } = await harness.job({ name: 'labelled' });
    await peer.requestDevice();
    const [running] = await series('salus_job_memory_persistent_bytes');
    expect(running).toMatch(new RegExp(`^\\{job="${jobId}",name="labelled",lane="lane-\\d+",state="running",gpu="0"\\} 0$`));
    await (await harness.control()).call('pauseJob', jobId);
    expect(await series('salus_job_memory_persistent_bytes')).toEqual([running.replace('state="running"', 'state="paused"')]);
    await (await harness.control()).call('killJob', jobId);
    expect(await series('salus_job_memory_persistent_bytes')).toEqual([`{job="${jobId}",name="labelled",lane="none",state="killed",gpu="0"} 0`]);
  });

  it('count iterations as the scheduler finishes them, and switches between jobs in a lane', async () => {
    harness.start();
    metrics = createServiceMetrics(harness.service);
    const a = await harness.job({ name: 'a' });
    const b = await harness.job({ name: 'b' });
    await a.peer.requestDevice();
    await b.peer.requestDevice();
    // a, b, a, b: one lane (the default policy's), three hand-overs.
    for (let rid = 100; rid < 102; rid++) {
      await iterate(a.peer, rid);
      await iterate(b.peer, rid);
    }
    for (const { jobId } of [a, b]) {
      const count = (await series('salus_job_iteration_duration_seconds_count')).find((line) => line.includes(`job="${jobId}"`));
      expect(count, jobId).toMatch(/ 2$/);
      const inf = (await series('salus_job_iteration_duration_seconds_bucket')).find((line) => line.includes(`job="${jobId}"`) && line.includes('le="+Inf"'));
      expect(inf, jobId).toMatch(/ 2$/);
    }
    const [switches] = await series('salus_scheduler_switches_total');
    expect(switches).toMatch(/^\{lane="lane-\d+"\} 3$/);
  });
});

describe('IterationHistogram', () => {
  it('counts each iteration in every bucket at or above it, with its sum and count', async () => {
    const histogram = new IterationHistogram(() => new Map([['job-1', { job: 'job-1' }]]));
    histogram.observe('job-1', 0.004);
    histogram.observe('job-1', 3);
    histogram.observe('job-1', 60);
    const { values } = await histogram.get();
    const bucket = (le: string) => values.find((v) => v.metricName.endsWith('_bucket') && v.labels.le === le)?.value;
    expect(bucket('0.001')).toBe(0);
    expect(bucket('0.005')).toBe(1);
    expect(bucket('2.5')).toBe(1);
    expect(bucket('5')).toBe(2);
    expect(bucket(String(ITERATION_BUCKETS_SECONDS.at(-1)))).toBe(2);
    expect(bucket('+Inf')).toBe(3);
    expect(values.find((v) => v.metricName.endsWith('_sum'))?.value).toBeCloseTo(63.004, 6);
    expect(values.find((v) => v.metricName.endsWith('_count'))?.value).toBe(3);
  });

  it('exposes each job under the labels it has when scraped, and forgets jobs the service no longer lists', async () => {
    let labels = new Map([['job-1', { job: 'job-1', state: 'running' }], ['job-2', { job: 'job-2', state: 'running' }]]);
    const histogram = new IterationHistogram(() => labels);
    histogram.observe('job-1', 0.01);
    histogram.observe('job-2', 0.01);
    labels = new Map([['job-1', { job: 'job-1', state: 'done' }]]);
    const first = await histogram.get();
    expect(new Set(first.values.map((v) => `${v.labels.job} ${v.labels.state}`))).toEqual(new Set(['job-1 done']));
    labels = new Map([['job-1', { job: 'job-1', state: 'done' }], ['job-2', { job: 'job-2', state: 'running' }]]);
    expect((await histogram.get()).values.some((v) => v.labels.job === 'job-2')).toBe(false);
  });
});
