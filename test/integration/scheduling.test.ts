/**
 * The service end to end: real `salus serve`, real job processes through
 * `salus run`, real WebGPU (SwiftShader here). Policies decide who finishes
 * first; admission makes a job wait for memory, or refuses one that can never
 * fit; a kill mid-iteration returns every byte while the other job carries on.
 */
import { describe, expect, it } from 'vitest';
import { lastJson, startServicePerTest, ROOT, type TestService } from '../helpers/service.js';
import { join } from 'node:path';

const STEPS = join(ROOT, 'test/fixtures/jobs/steps.js');
const MiB = 1024 * 1024;


let service: TestService | null = null;
const startService = startServicePerTest();

async function finishOrder(policy: string): Promise<string[]> {
  service = await startService(['--memory', '256MiB', '--policy', policy]);
  // ~15 ms iterations here: the long job runs ~2 s, long enough for the short one to arrive.
  const long = service.startJob(['--name', 'long', '--iterations', '120', STEPS, '--', '--iterations', '120', '--work', '64']);
  await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'long' && j.iterations.done >= 3));
  const short = service.startJob(['--name', 'short', '--iterations', '5', STEPS, '--', '--iterations', '5', '--work', '64']);
  const [a, b] = await Promise.all([long.done, short.done]);
  const started = await service.json<any[]>(['jobs']);
  // Both were alive together, or the order would say nothing about the policy.
  expect(started.find((j) => j.name === 'short').startedAt).toBeLessThan(started.find((j) => j.name === 'long').finishedAt);
  expect(a.code, a.stderr).toBe(0);
  expect(b.code, b.stderr).toBe(0);
  const jobs = await service.json<any[]>(['jobs']);
  return [...jobs].sort((x, y) => x.finishedAt - y.finishedAt).map((j) => j.name);
}

describe('scheduling policies', () => {
  it('FIFO finishes the job that came first before starting the next', async () => {
    expect(await finishOrder('FIFO')).toEqual(['long', 'short']);
  });

  it('SRTF finishes a short job that came later before a long one', async () => {
    expect(await finishOrder('SRTF')).toEqual(['short', 'long']);
  });
});

describe('FAIR shares', () => {
  it('gives two jobs that always ask GPU time in proportion to their shares, 3:1 within 5%', async () => {
    service = await startService(['--memory', '256MiB', '--policy', 'FAIR']);
    // A lane held long enough for the job FAIR prefers to ask again, however busy the machine's CPU: the split is then the shares'.
    expect((await service.cli(['policy', 'FAIR', '--set', 'holdMs=1000'])).code).toBe(0);
    const args = (name: string, share: string) => ['--name', name, '--share', share, STEPS, '--', '--iterations', '100000', '--work', '64'];
    const jobs = [service.startJob(args('three', '3')), service.startJob(args('one', '1'))];
    // FAIR counts the GPU time since each job came: whichever connected later first catches up with the other's time
    // per share, and from then on the two stay level (within an iteration). So, seconds in, their parts are 3:1.
    const infos = await service.waitForJobs((all) => {
      const [three, one] = ['three', 'one'].map((name) => all.find((j) => j.name === name));
      return three?.attainedMs >= 3000 && one?.iterations.done >= 5 && all;
    }, 60_000);
    for (const job of infos) await service.cli(['kill', job.id]);
    await Promise.all(jobs.map((job) => job.done));
    const row = (name: string) => infos.find((j) => j.name === name);
    const fraction = row('three').attainedMs / (row('three').attainedMs + row('one').attainedMs);
    const detail = JSON.stringify(infos.map((j) => ({ name: j.name, attainedMs: j.attainedMs, iterations: j.iterations.done, avgIterationMs: j.avgIterationMs })));
    expect(Math.abs(fraction - 0.75), detail).toBeLessThan(0.05);
    // `salus jobs` says so: each job's share, and its part of the GPU time the live jobs received.
    expect(row('three').share).toBe(3);
    expect(row('one').share).toBe(1);
    expect(row('three').attainedFraction).toBeCloseTo(fraction, 6);
    expect(row('three').attainedFraction + row('one').attainedFraction).toBeCloseTo(1, 6);
  }, 120_000);
});

describe('iteration boundaries', () => {
  it("a job's work between its marked iterations does not hold the lane", async () => {
    service = await startService(['--memory', '256MiB', '--policy', 'FIFO']);
    const busyMs = 600;
    const run = await service.startJob(['--name', 'busy-between', STEPS, '--', '--iterations', '4', '--sdk', '--busy-ms', String(busyMs)]).done;
    expect(run.code, run.stderr).toBe(0);
    const [job] = await service.waitForJobs((all) => {
      const ours = all.filter((j) => j.name === 'busy-between' && j.finishedAt);
      return ours.length === 1 && ours;
    });
    expect(job.iterationSource).toBe('sdk');
    expect(job.iterations.done).toBe(4);
    // The iteration's end reaches the service when the job's iteration() returns, not at its next begin.
    expect(job.avgIterationMs).toBeLessThan(busyMs / 2);
  }, 60_000);
});

describe('admission', () => {
  it('a job that does not fit waits queued, then runs when memory frees', async () => {
    service = await startService(['--memory', '64MiB', '--policy', 'PACK']);
    const first = service.startJob(['--name', 'first', '--persistent', '32MiB', '--ephemeral', '1MiB', STEPS, '--',
      '--iterations', '100000', '--persistent', String(32 * MiB), '--ephemeral', String(MiB), '--work', '4']);
    const running = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'first' && j.state === 'running'));
    const second = service.startJob(['--name', 'second', '--persistent', '32MiB', '--ephemeral', '1MiB', STEPS, '--',
      '--iterations', '3', '--persistent', String(32 * MiB), '--ephemeral', String(MiB), '--work', '4']);
    const queued = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'second' && j.state === 'queued'));
    expect(queued.lane).toBeNull();
    await new Promise((r) => setTimeout(r, 300));
    const jobs = await service.json<any[]>(['jobs']);
    expect(jobs.find((j) => j.name === 'second').state).toBe('queued');
    expect(jobs.find((j) => j.name === 'first').state).toBe('running');
    // Memory frees when the first job goes: the waiting one is admitted and runs to its end.
    expect((await service.cli(['kill', running.id])).code).toBe(0);
    const b = await second.done;
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toMatch(/queued: waiting for GPU memory/);
    await first.done;
    const after = await service.json<any[]>(['jobs']);
    const byName = Object.fromEntries(after.map((j) => [j.name, j]));
    expect(byName.second.state).toBe('done');
    expect(byName.second.startedAt).toBeGreaterThanOrEqual(byName.first.finishedAt);
  });

  it('a job that could never fit is refused with a message saying so', async () => {
    service = await startService(['--memory', '64MiB']);
    const job = service.startJob(['--name', 'huge', '--persistent', '100MiB', STEPS, '--', '--iterations', '1']);
    const result = await job.done;
    expect(result.code).not.toBe(0);
    const [info] = await service.json<any[]>(['jobs']);
    expect(info.state).toBe('failed');
    expect(info.error).toMatch(/never fit|can never|cannot fit/i);
    expect(result.stderr + result.stdout).toMatch(/64 MiB|64.00 MiB/);
  });
});

describe('lifecycle', () => {
  it('two jobs at once both get the results they get alone', async () => {
    service = await startService(['--memory', '256MiB', '--policy', 'PACK']);
    const args = (work: string) => [STEPS, '--', '--iterations', '8', '--work', work, '--ephemeral', String(MiB)];
    const local = await service.cli(['run', '--local', ...args('24')]);
    const localOther = await service.cli(['run', '--local', ...args('40')]);
    const a = service.startJob(args('24'));
    const b = service.startJob(args('40'));
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(lastJson(ra.stdout).checksum).toBe(lastJson(local.stdout).checksum);
    expect(lastJson(rb.stdout).checksum).toBe(lastJson(localOther.stdout).checksum);
    expect(lastJson(ra.stdout).checksum).not.toBe(lastJson(rb.stdout).checksum);
  });

  it('a kill mid-iteration returns every byte at once; the other job finishes right', async () => {
    service = await startService(['--memory', '256MiB', '--policy', 'PACK']);
    const survivorArgs = [STEPS, '--', '--iterations', '20', '--work', '16', '--persistent', String(2 * MiB)];
    const expected = lastJson((await service.cli(['run', '--local', ...survivorArgs])).stdout).checksum;
    const victim = service.startJob(['--name', 'victim', STEPS, '--', '--iterations', '100000', '--work', '64',
      '--persistent', String(8 * MiB), '--ephemeral', String(4 * MiB)]);
    const survivor = service.startJob(['--name', 'survivor', ...survivorArgs]);
    const info = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'victim' && j.iterations.done >= 2));
    const before = await service.json<any>(['memory']);
    expect(before.usedBytes).toBeGreaterThanOrEqual(8 * MiB);
    const kill = await service.cli(['kill', info.id]);
    expect(kill.code, kill.stderr).toBe(0);
    const after = await service.json<any>(['memory']);
    expect(after.jobs.find((j: any) => j.id === info.id)).toBeUndefined();
    for (const lane of after.lanes) expect(lane.jobs).not.toContain(info.id);
    const killed = (await service.json<any[]>(['jobs'])).find((j) => j.id === info.id);
    expect(killed.state).toBe('killed');
    const victimResult = await victim.done;
    expect(victimResult.code).not.toBe(0);
    const survivorResult = await survivor.done;
    expect(survivorResult.code, survivorResult.stderr).toBe(0);
    expect(lastJson(survivorResult.stdout).checksum).toBe(expected);
    const end = await service.json<any>(['memory']);
    expect(end.usedBytes).toBe(0);
    expect(end.lanes).toEqual([]);
  });
});

describe('memory accounting', () => {
  it('counts weights as persistent and per-iteration buffers as ephemeral, exactly', async () => {
    service = await startService(['--memory', '256MiB']);
    for (const mode of [[], ['--sdk']]) {
      const name = `acct${mode.length}`;
      const job = service.startJob(['--name', name, STEPS, '--', '--iterations', '40',
        '--persistent', String(MiB), '--ephemeral', String(2 * MiB), '--work', '2', ...mode]);
      const live = await service.waitForJobs((jobs) => jobs.find((j) => j.name === name && j.iterations.done >= 3));
      // weights + a 16-byte result + a 16-byte readback buffer
      expect(live.memory.persistentBytes).toBe(MiB + 32);
      expect(live.memory.ephemeralPeakBytes).toBe(2 * MiB);
      const result = await job.done;
      expect(result.code, result.stderr).toBe(0);
    }
    const jobs = await service.json<any[]>(['jobs']);
    for (const job of jobs) {
      expect(job.state).toBe('done');
      expect(job.memory.persistentBytes).toBe(0); // it holds nothing any more
      expect(job.memory.ephemeralPeakBytes).toBe(2 * MiB);
      expect(job.iterations.done).toBe(40);
    }
    expect(jobs.map((j) => j.iterationSource).sort()).toEqual(['inferred', 'sdk']);
  });

  it('two jobs sharing one lane need the larger ephemeral peak, not the sum', async () => {
    service = await startService(['--memory', '256MiB', '--policy', 'FAIR']);
    // Long enough that both are still in the lane when `salus memory` answers on a loaded machine (12 iterations were not).
    const args = (name: string) => ['--name', name, STEPS, '--', '--iterations', '60', '--ephemeral', String(2 * MiB), '--work', '2', '--sdk'];
    const a = service.startJob(args('a'));
    const b = service.startJob(args('b'));
    const seen: number[] = [];
    await service.waitForJobs((jobs) => jobs.length === 2 && jobs.every((j) => j.iterations.done >= 2));
    while (seen.length < 10) {
      const memory = await service.json<any>(['memory']);
      if (memory.lanes.length === 1 && memory.lanes[0].jobs.length === 2) seen.push(memory.lanes[0].pooledBytes);
      else break;
    }
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    for (const pooled of seen) expect(pooled).toBe(2 * MiB);
  });
});
