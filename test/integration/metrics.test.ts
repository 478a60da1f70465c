/**
 * `/metrics` while jobs run: a real `salus serve --http`, real job processes,
 * the exposition parsed strictly (test/helpers/prometheusText.ts). Every
 * series of README's table is there, with the labels it promises and values
 * that agree with `salus jobs --json` and `salus memory --json`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, type Family } from '../helpers/prometheusText.js';
import { until } from '../helpers/rawSocket.js';
import { ROOT, startServicePerTest, type TestService } from '../helpers/service.js';

const STEPS = join(ROOT, 'test/fixtures/jobs/steps.js');
const MiB = 1024 * 1024;
const JOB_LABELS = ['gpu', 'job', 'lane', 'name', 'state'];

let service: TestService | null = null;
const startService = startServicePerTest();

function family(families: Map<string, Family>, name: string, type: Family['type']): Family {
  const found = families.get(name);
  expect(found, `${name} is missing`).toBeDefined();
  expect(found!.type).toBe(type);
  expect(found!.help.length).toBeGreaterThan(10);
  return found!;
}

function valueOf(f: Family, labels: Record<string, string>): number {
  const sample = f.samples.find((s) => Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  expect(sample, `${f.name}${JSON.stringify(labels)} is missing`).toBeDefined();
  return sample!.value;
}

describe('/metrics', () => {
  it('has every series, per GPU, job and lane, with the right labels while jobs run', async () => {
    // FAIR alternates the two running jobs in one lane, so the lane switches between them.
    service = await startService(['--http', '127.0.0.1:0', '--memory', '256MiB', '--policy', 'FAIR']);
    const url = new URL((await until(() => /salus: panel at (\S+)/.exec(service!.log()), 'the panel URL'))[1]);
    const token = url.searchParams.get('token')!;
    const steps = (name: string, persistent: string) => service!.startJob(['--name', name, '--persistent', persistent, STEPS, '--',
      '--iterations', '100000', '--persistent', String(MiB), '--ephemeral', String(MiB), '--work', '4']);
    steps('alpha', '1MiB');
    steps('beta', '1MiB');
    await service.waitForJobs((jobs) => jobs.filter((j) => j.state === 'running' && j.iterations.done >= 5).length === 2);
    // Declares (with admission's 10% margin) more than is left but less than the GPU: waits queued, in no lane.
    steps('gamma', '231MiB');
    await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'gamma' && j.state === 'queued'));

    const response = await fetch(new URL(`/metrics?token=${token}`, url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(await response.text());
    const jobs = await service.json<any[]>(['jobs']);
    const memory = await service.json<any>(['memory']);

    // The GPU, as DCGM's and nvitop's exporters show one.
    const info = family(families, 'salus_gpu_info', 'gauge').samples[0];
    expect(info.labels).toMatchObject({ gpu: '0', software: 'true', backend: 'vulkan' });
    expect(info.labels.model_name).toMatch(/SwiftShader/i);
    const total = valueOf(family(families, 'salus_gpu_memory_total_bytes', 'gauge'), { gpu: '0' });
    const used = valueOf(family(families, 'salus_gpu_memory_used_bytes', 'gauge'), { gpu: '0' });
    const free = valueOf(family(families, 'salus_gpu_memory_free_bytes', 'gauge'), { gpu: '0' });
    expect(total).toBe(256 * MiB);
    expect(used).toBeGreaterThanOrEqual(2 * MiB);
    expect(used + free).toBe(total);
    // Compiled pipelines kept for later jobs, as the memory map counts them.
    expect(valueOf(family(families, 'salus_gpu_pipelines_kept', 'gauge'), { gpu: '0' })).toBe(memory.keptPipelines.count);
    expect(valueOf(family(families, 'salus_gpu_pipelines_reused_total', 'counter'), { gpu: '0' })).toBe(memory.keptPipelines.reused);
    const busy = valueOf(family(families, 'salus_gpu_busy_ratio', 'gauge'), { gpu: '0' });
    expect(busy).toBeGreaterThanOrEqual(0);
    expect(busy).toBeLessThanOrEqual(1);
    expect(valueOf(family(families, 'salus_jobs', 'gauge'), { state: 'running' })).toBe(2);
    expect(valueOf(families.get('salus_jobs')!, { state: 'queued' })).toBe(1);

    // Per job: the four labels, agreeing with `salus jobs --json`.
    const perJob: Array<[string, Family['type']]> = [
      ['salus_job_memory_persistent_bytes', 'gauge'], ['salus_job_memory_ephemeral_peak_bytes', 'gauge'],
      ['salus_job_memory_resident_bytes', 'gauge'], ['salus_job_iterations_total', 'counter'],
      ['salus_job_queued_seconds_total', 'counter'], ['salus_job_gpu_seconds_total', 'counter'],
    ];
    for (const [name, type] of perJob) {
      const f = family(families, name, type);
      for (const sample of f.samples) expect(Object.keys(sample.labels).sort(), name).toEqual(JOB_LABELS);
      for (const job of jobs) {
        expect(valueOf(f, { job: job.id, name: job.name, lane: job.lane ?? 'none', state: job.state, gpu: job.gpu ? '0' : 'none' })).toBeGreaterThanOrEqual(0);
      }
    }
    const alpha = jobs.find((j) => j.name === 'alpha');
    expect(alpha.lane).toMatch(/\S/);
    expect(valueOf(families.get('salus_job_memory_persistent_bytes')!, { job: alpha.id, state: 'running' })).toBeGreaterThanOrEqual(MiB);
    expect(valueOf(families.get('salus_job_memory_resident_bytes')!, { job: alpha.id })).toBeGreaterThanOrEqual(MiB);
    expect(valueOf(families.get('salus_job_iterations_total')!, { job: alpha.id })).toBeGreaterThanOrEqual(5);
    const gamma = jobs.find((j) => j.name === 'gamma');
    expect(valueOf(families.get('salus_job_iterations_total')!, { job: gamma.id, lane: 'none', state: 'queued' })).toBe(0);

    // The iteration-time histogram: cumulative buckets up to +Inf = count, under the job's labels.
    const histogram = family(families, 'salus_job_iteration_duration_seconds', 'histogram');
    const buckets = histogram.samples.filter((s) => s.name.endsWith('_bucket') && s.labels.job === alpha.id);
    expect(buckets.length).toBeGreaterThan(5);
    for (const bucket of buckets) expect(Object.keys(bucket.labels).sort()).toEqual([...JOB_LABELS, 'le'].sort());
    const counts = buckets.map((b) => b.value);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    const count = histogram.samples.find((s) => s.name.endsWith('_count') && s.labels.job === alpha.id)!.value;
    expect(buckets.at(-1)!.labels.le).toBe('+Inf');
    expect(buckets.at(-1)!.value).toBe(count);
    expect(count).toBeGreaterThanOrEqual(5);
    expect(histogram.samples.find((s) => s.name.endsWith('_sum') && s.labels.job === alpha.id)!.value).toBeGreaterThan(0);

    // Per lane, agreeing with `salus memory --json`; and the switches between the two jobs.
    for (const lane of memory.lanes) {
      expect(valueOf(family(families, 'salus_lane_size_bytes', 'gauge'), { lane: lane.id })).toBe(lane.sizeBytes);
      expect(valueOf(family(families, 'salus_lane_pooled_bytes', 'gauge'), { lane: lane.id })).toBeGreaterThanOrEqual(0);
      expect(valueOf(family(families, 'salus_lane_jobs', 'gauge'), { lane: lane.id })).toBe(lane.jobs.length);
    }
    expect(valueOf(family(families, 'salus_scheduler_switches_total', 'counter'), { lane: alpha.lane })).toBeGreaterThan(0);
    // Node's own, as prom-client names them.
    family(families, 'salus_process_cpu_seconds_total', 'counter');

    // The Grafana dashboard in assets/ graphs only series that exist.
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'assets/grafana/salus-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((panel: any) => panel.targets.map((target: any) => target.expr));
    const graphed = new Set(exprs.flatMap((expr) => expr.match(/\bsalus_[a-z_]+/g) ?? []));
    expect(graphed.size).toBeGreaterThanOrEqual(12);
    for (const name of graphed) expect(families.has(name.replace(/_bucket$/, '')), `the dashboard graphs ${name}`).toBe(true);

    expect((await fetch(new URL('/metrics', url))).status).toBe(401);
  });
});
