/** The `salus` CLI against a real service: policy changes, pause and resume, and its errors. */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serviceForAllTests, startService, ROOT, SALUS_BIN } from '../helpers/service.js';

const service = serviceForAllTests(['--memory', '128MiB', '--policy', 'fifo']);

describe('salus policy', () => {
  it('shows the policy as {name, params, knobs} and changes it live', async () => {
    const initial = await service.json<any>(['policy']);
    expect(initial.name).toBe('FIFO');
    expect(initial.params).toMatchObject({ workConserving: false, maxLanes: 1 });
    expect(initial.knobs.map((k: any) => k.key)).toContain('holdMs');
    const changed = await service.json<any>(['policy', 'srtf', '--set', 'holdMs=120', '--set', 'workConserving=on']);
    expect(changed).toMatchObject({ name: 'SRTF', params: { holdMs: 120, workConserving: true } });
    expect((await service.json<any>(['policy'])).params.holdMs).toBe(120);
    const text = await service.cli(['policy']);
    expect(text.stdout).toMatch(/policy SRTF/);
    expect(text.stdout).toMatch(/holdMs = 120/);
  });

  it('rejects an unknown knob, a bad value and an unknown policy with a message that helps', async () => {
    const unknown = await service.cli(['policy', '--set', 'speed=11']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/holdMs/);
    const range = await service.cli(['policy', '--set', 'holdMs=-5']);
    expect(range.code).toBe(1);
    expect(range.stderr).toMatch(/holdMs/);
    const name = await service.cli(['policy', 'lottery']);
    expect(name.code).toBe(1);
    expect(name.stderr.trim()).toBe("salus: unknown policy 'lottery': one of FIFO, SRTF, PACK, FAIR, PRIORITY");
  });

  it('refuses a knob value it cannot read instead of guessing, and changes nothing', async () => {
    const before = await service.json<any>(['policy']);
    const maybe = await service.cli(['policy', '--set', 'workConserving=maybe']);
    expect(maybe.code).toBe(2);
    expect(maybe.stderr).toMatch(/"maybe" is not a boolean/);
    const soon = await service.cli(['policy', '--set', 'holdMs=soon']);
    expect(soon.code).toBe(2);
    expect(soon.stderr).toMatch(/"soon" is not a number/);
    expect((await service.json<any>(['policy'])).params).toEqual(before.params);
  });
});

describe('job control', () => {
  it('pause stops a job between iterations, resume lets it go on, kill ends it', async () => {
    const job = service.startJob(['--name', 'pausable', join(ROOT, 'test/fixtures/jobs/steps.js'), '--', '--iterations', '100000', '--work', '4']);
    const running = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'pausable' && j.iterations.done >= 3));
    expect((await service.cli(['pause', running.id])).code).toBe(0);
    const paused = await service.waitForJobs((jobs) => jobs.find((j) => j.id === running.id && j.state === 'paused'));
    await new Promise((r) => setTimeout(r, 300));
    const a = (await service.json<any[]>(['jobs'])).find((j) => j.id === running.id).iterations.done;
    await new Promise((r) => setTimeout(r, 500));
    const b = (await service.json<any[]>(['jobs'])).find((j) => j.id === running.id).iterations.done;
    expect(b).toBe(a);
    expect(paused.state).toBe('paused');
    const again = await service.cli(['pause', running.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/only a running job/);
    expect((await service.cli(['resume', running.id])).code).toBe(0);
    await service.waitForJobs((jobs) => jobs.find((j) => j.id === running.id && j.iterations.done > b + 2));
    expect((await service.cli(['kill', running.id])).code).toBe(0);
    const result = await job.done;
    expect(result.code).not.toBe(0);
    expect((await service.json<any[]>(['jobs'])).find((j) => j.id === running.id).state).toBe('killed');
  });

  it("relays a job's output to its terminal and to the service, for the panel", async () => {
    const result = await service.cli(['run', '--name', 'talker', join(ROOT, 'test/fixtures/jobs/steps.js'), '--', '--iterations', '3']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/"done":true/);
    const job = (await service.json<any[]>(['jobs'])).find((j) => j.name === 'talker');
    const control = await service.control();
    const output = await control.call<string>('jobOutput', job.id);
    expect(output).toContain('"done":true');
    expect(output).toContain('"step":2');
  });

  it('keeps the job running, quietly, when the reader of its output goes away (salus run job | head)', async () => {
    const job = service.startJob(['--name', 'headed', join(ROOT, 'test/fixtures/jobs/steps.js'), '--', '--iterations', '40']);
    // As `head -1` does: read the first output, then close the pipe.
    await new Promise<void>((resolve) => job.child.stdout!.once('data', () => resolve()));
    job.child.stdout!.destroy();
    const run = await job.done;
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/EPIPE|Error/);
    const [finished] = await service.waitForJobs((all) => {
      const ours = all.filter((j) => j.name === 'headed' && j.finishedAt);
      return ours.length === 1 && ours;
    });
    expect(finished.state).toBe('done');
    const control = await service.control();
    expect(await control.call<string>('jobOutput', finished.id)).toContain('"step":39');
  });

  it('says what to do for an unknown job, an unknown command and a missing service', async () => {
    const missing = await service.cli(['kill', 'job-999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no job 'job-999'/);
    const unknown = await service.cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/usage: salus/);
    const nothing = spawnSync(process.execPath, [SALUS_BIN, 'jobs', '--socket', join(service.dir, 'nowhere.sock')], { encoding: 'utf8' });
    expect(nothing.status).toBe(1);
    expect(nothing.stderr).toMatch(/no Salus service is listening at .*salus serve/);
  });
});

describe('salus run scheduling hints', () => {
  it('passes --duration and --share to the service, and checks them first', async () => {
    const steps = join(ROOT, 'test/fixtures/jobs/steps.js');
    const run = await service.cli(['run', '--name', 'declared', '--iterations', '3', '--duration', '1m30s', '--share', '2.5', steps, '--', '--iterations', '3']);
    expect(run.code, run.stderr).toBe(0);
    const job = (await service.json<any[]>(['jobs'])).find((j) => j.name === 'declared');
    expect(job).toMatchObject({ share: 2.5, iterations: { done: 3, total: 3 } });
    expect((await service.cli(['jobs'])).stdout).toMatch(/SHARE\s+GPU TIME/);
    const share = await service.cli(['run', steps, '--share', '0']);
    expect(share.code).toBe(2);
    expect(share.stderr).toContain("--share must be a number above 0, got '0'");
    const duration = await service.cli(['run', steps, '--duration', '5']);
    expect(duration.code).toBe(2);
    expect(duration.stderr).toContain("--duration: '5' is not a duration");
  });
});

describe('salus share', () => {
  it('changes a running job\'s share, live, and refuses a share that is not above 0', async () => {
    const steps = join(ROOT, 'test/fixtures/jobs/steps.js');
    // Far more iterations than the test's CLI calls can outlast on a loaded machine: it ends by the kill below.
    const job = service.startJob(['--name', 'reweighed', steps, '--', '--iterations', '100000', '--work', '8']);
    const running = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'reweighed' && j.state === 'running'));
    const set = await service.cli(['share', running.id, '2.5']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`${running.id} share 2.5\n`);
    const after = await service.waitForJobs((jobs) => jobs.find((j) => j.id === running.id && j.share === 2.5));
    expect(after.share).toBe(2.5);
    const zero = await service.cli(['share', running.id, '0']);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/W must be a number above 0, got '0'/);
    expect(zero.stderr).not.toMatch(/usage: salus/);
    const missing = await service.cli(['share', 'job-999', '2']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no job 'job-999'/);
    await service.cli(['kill', running.id]);
    await job.done;
    const ended = await service.cli(['share', running.id, '2']);
    expect(ended.code).toBe(1);
    expect(ended.stderr).toMatch(/is killed; only a queued, running or paused job's share can change/);
  }, 60_000);
});

describe('finding the service', () => {
  it('reaches the desktop app\'s service from a terminal when no other service runs', async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'salus-desktop-'));
    // As the app starts it: on its own socket; the terminal has no SALUS_SOCKET.
    const desktop = await startService(['--socket', join(runtime, 'salus', 'desktop.sock')], { XDG_RUNTIME_DIR: runtime, SALUS_SOCKET: '' });
    try {
      const job = desktop.startJob(['--name', 'from-terminal', join(ROOT, 'test/fixtures/jobs/steps.js'), '--', '--iterations', '3']);
      const result = await job.done;
      expect(result.code, job.stdout()).toBe(0);
      const jobs = await desktop.json<any[]>(['jobs']);
      expect(jobs.find((j) => j.name === 'from-terminal')).toMatchObject({ state: 'done' });
    } finally {
      await desktop.stop();
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});
