/**
 * The control handlers called as plain code (core/service/control.ts `runControl`),
 * as the socket server, the web bridge and Electron's IPC call them: every
 * argument checked against the call table first, then the handler acts on a
 * real service (SwiftShader). Here: the calls service.test.ts does not reach
 * over the transport (shares, knobs; the examples' list), and the web panel's confinement
 * of uploads and launches, which refuses before any process is started.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runControl, type ControlTarget } from '../../../core/service/control.js';
import { listExampleJobs } from '../../../core/service/examples.js';
import { JobLauncher } from '../../../core/service/launcher.js';
import { ROOT } from '../../helpers/service.js';
import { ControlError } from '../../../core/service/service.js';
import { ErrorCode } from '../../../core/protocol/messages.js';
import type { JobInfo, PolicyInfo } from '../../../core/protocol/state.js';
import { useService } from './harness.js';

const harness = useService();
let jobsDir: string | null = null;
afterEach(() => {
  if (jobsDir) rmSync(jobsDir, { recursive: true, force: true });
  jobsDir = null;
});

/** A target whose service launches jobs from a fresh jobs folder. */
function withLauncher(): ControlTarget & { launcher: JobLauncher } {
  harness.start();
  jobsDir = join(mkdtempSync(join(tmpdir(), 'salus-control-')), 'jobs');
  return { ...harness.target, launcher: new JobLauncher(harness.service, '/nowhere/salus.sock', jobsDir) };
}

/** The ControlError a call throws. */
async function refusal(promise: Promise<unknown>): Promise<ControlError> {
  const error = await promise.then(() => null, (thrown: unknown) => thrown);
  expect(error).toBeInstanceOf(ControlError);
  return error as ControlError;
}

describe('runControl', () => {
  it('changes a running job\'s share, within the table\'s bounds', async () => {
    harness.start();
    const { peer, jobId } = await harness.job();
    await peer.requestDevice();
    await runControl(harness.target, 'setShare', [jobId, 2.5]);
    expect(harness.service.jobInfos()[0].share).toBe(2.5);
    for (const share of [0, -1, 2e6, 'much']) {
      expect((await refusal(runControl(harness.target, 'setShare', [jobId, share]))).message).toMatch(/^setShare: 1: /);
    }
    expect((await refusal(runControl(harness.target, 'setShare', ['job-99', 2]))).code).toBe(ErrorCode.NotFound);
    expect(harness.service.jobInfos()[0].share).toBe(2.5);
  });

  it('sets a policy\'s knobs, and names the bad one and the valid ones when one is wrong', async () => {
    harness.start();
    await runControl(harness.target, 'setPolicy', ['FIFO']);
    const info = await runControl(harness.target, 'setPolicyParams', [{ holdMs: 40, workConserving: true }]) as PolicyInfo;
    expect(info.params).toMatchObject({ holdMs: 40, workConserving: true });
    expect(harness.service.policyInfo().params.holdMs).toBe(40);
    const unknown = await refusal(runControl(harness.target, 'setPolicyParams', [{ agingPerSecond: 1 }]));
    expect(unknown.message).toMatch(/agingPerSecond.*FIFO.*holdMs/s);
    expect(harness.service.policyInfo().params.holdMs).toBe(40);
  });

  it('lists the shipped examples, each with the first sentence of its header', () => {
    // The handler reads EXAMPLE_JOBS_DIR, which is assets/jobs as seen from dist/; from the sources, name it.
    const examples = listExampleJobs(join(ROOT, 'assets', 'jobs'));
    expect(examples.map((example) => example.name)).toEqual(expect.arrayContaining(['wgsl-train', 'tfjs-train', 'ort-serve']));
    // Helper modules (the PRNG, ORT's models) are no examples.
    expect(examples.map((example) => example.name)).not.toContain('prng');
    for (const example of examples) expect(example.description).toMatch(/\S.*[.…]$/);
  });

  it('answers the jobs of the service it was given, and refuses a method it does not know', async () => {
    harness.start();
    await harness.job({ name: 'listed' });
    expect((await runControl(harness.target, 'jobs', []) as JobInfo[]).map((job) => job.name)).toEqual(['listed']);
    expect((await refusal(runControl(harness.target, 'teleport', []))).code).toBe(ErrorCode.UnknownMethod);
  });
});

describe('uploads and launches from the web panel', () => {
  it('keeps an upload in the jobs folder under a safe name, readable by its user alone', async () => {
    const target = withLauncher();
    const { file } = await runControl(target, 'uploadJob', ['my job!.mjs', 'export {};\n'], 'web') as { file: string };
    expect(file.startsWith(`${jobsDir!}/`)).toBe(true);
    expect(file).toMatch(/\/\d+-my_job_\.mjs$/);
    expect(readFileSync(file, 'utf8')).toBe('export {};\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // Names with folders, or of no module, are the call table's to refuse.
    for (const name of ['../../etc/x.js', 'notes.txt']) {
      expect((await refusal(runControl(target, 'uploadJob', [name, 'hello'], 'web'))).message).toBe('uploadJob: 0: a file name (no folders) ending in .js or .mjs');
    }
  });

  it('refuses, before starting anything, a file the web panel did not upload and that ships as no example', async () => {
    const target = withLauncher();
    const outside = join(jobsDir!, '..', 'outside.js');
    writeFileSync(outside, 'export {};\n');
    const web = await refusal(runControl(target, 'launchJob', [{ file: outside }], 'web'));
    expect(web.message).toMatch(/^the web panel may launch only \.js or \.mjs files that it uploaded or that ship as examples/);
    const missing = await refusal(runControl(target, 'launchJob', [{ file: join(jobsDir!, 'gone.js') }], 'local'));
    expect(missing.message).toBe(`job file not found: ${join(jobsDir!, 'gone.js')}`);
    // A link from the jobs folder to a file outside it is judged by where it leads.
    const { file: uploaded } = await runControl(target, 'uploadJob', ['x.js', ''], 'web') as { file: string };
    rmSync(uploaded);
    symlinkSync(outside, uploaded);
    expect((await refusal(runControl(target, 'launchJob', [{ file: uploaded }], 'web'))).message).toMatch(/^the web panel may launch only/);
    expect(harness.service.jobInfos()).toEqual([]);
    expect(existsSync(outside)).toBe(true);
  });
});
