/**
 * Large data takes the bulk channel (files in a private shared-memory folder of
 * the service) instead of the socket: it must arrive exactly, leave nothing
 * behind, and accept only the sending job's own files.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, readdirSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { lastJson, startService, ROOT, type TestService } from '../helpers/service.js';
import { FrameDecoder } from '../../core/protocol/frames.js';
import { rawJobWithRing, rawSocket, sendFrame, until } from '../helpers/rawSocket.js';
import { execFileSync } from 'node:child_process';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

let service: TestService | null = null;
afterEach(async () => {
  await service?.stop();
  service = null;
});

describe.runIf(process.platform === 'linux' && existsSync('/dev/shm'))('the bulk channel', () => {
  // With the shared-memory addon each job gets a ring (core/platform/scratchPool.ts) that it maps; SALUS_SHM=0 is the
  // fallback without the addon: for the service (no rings: the job writes a file of its own), or for the job alone
  // (it writes into the service's ring with plain writes).
  const paths = [
    ['a scratch ring', {}, {}, 'ring'],
    ['plain files (SALUS_SHM=0)', { SALUS_SHM: '0' }, {}, 'file'],
    ['a ring the job writes without the addon', {}, { SALUS_SHM: '0' }, 'ring'],
  ] as const;
  for (const [path, serviceEnv, jobEnv, kind] of paths) {
    it(`carries big uploads and write-mapped ranges exactly through ${path}, and leaves no file behind`, async () => {
      service = await startService(['--memory', '1GiB'], serviceEnv);
      const dir = join('/dev/shm', `salus-${process.getuid!()}`, String(service.process.pid));
      expect(existsSync(dir)).toBe(true);
      // Whether the job's scratch was the service's ring (a link) or a file of its own.
      const kinds = new Set<string>();
      const watch = setInterval(() => {
        for (const name of readdirSync(dir)) {
          try {
            kinds.add(lstatSync(join(dir, name)).isSymbolicLink() ? 'ring' : 'file');
          } catch {
            // Gone between the listing and the look.
          }
        }
      }, 2);
      const job = service.startJob([join(ROOT, 'test/fixtures/jobs/bigUpload.js'), '--', '--mib', '24'], jobEnv);
      const result = await job.done.finally(() => clearInterval(watch));
      expect(result.code, result.stderr).toBe(0);
      expect([...kinds]).toEqual([kind]);
      expect(lastJson(result.stdout)).toEqual({ bytes: 24 * 1024 * 1024, bad: 0 });
      expect(readdirSync(dir)).toEqual([]);
      if ('SALUS_SHM' in serviceEnv) expect(service.log()).toMatch(/uploads go through plain bulk files, one copy more \(SALUS_SHM=0\)/);
      else expect(service.log()).not.toMatch(/plain bulk files/);
      await service.stop();
      service = null;
      expect(existsSync(dir)).toBe(false);
    });
  }

  it('writes repeated uploads into one scratch file that it reuses, exactly', async () => {
    service = await startService(['--memory', '1GiB']);
    const dir = join('/dev/shm', `salus-${process.getuid!()}`, String(service.process.pid));
    const seen = new Set<string>();
    const watch = setInterval(() => { for (const name of readdirSync(dir)) seen.add(name); }, 2);
    try {
      const result = await service.cli(['run', join(ROOT, 'test/fixtures/jobs/repeatedUpload.js'), '--', '--mib', '6', '--times', '4']);
      expect(result.code, result.stderr).toBe(0);
      expect(lastJson(result.stdout)).toEqual({ bytes: 6 * 1024 * 1024, times: 4, bad: 0 });
    } finally {
      clearInterval(watch);
    }
    // Eight 6 MiB uploads, and never a file of their own: the job's scratch file took each.
    expect([...seen]).toEqual([expect.stringMatching(/^job-\d+-s$/)]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('answers a scratch file that is a FIFO with an error, without waiting on it (no rings: the job makes its own file)', async () => {
    service = await startService(['--memory', '64MiB'], { SALUS_SHM: '0' });
    const { socket, frames } = await rawSocket(service.socketPath);
    sendFrame(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'fifo' });
    const welcome = await until(() => frames.find((f) => f.t === 'welcome'));
    execFileSync('mkfifo', [join(welcome.bulkDir, `${welcome.jobId}-s`)]);
    sendFrame(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.find((f) => f.rid === 1));
    sendFrame(socket, { t: 'batch', scratchBytes: 16, cmds: [
      { op: 'createBuffer', id: 1, size: 16, usage: 8 | 4 },
      { op: 'writeBuffer', id: 1, offset: 0, data: { scratch: 0, length: 16 } },
      { op: 'workDone', rid: 2 },
    ] });
    await until(() => frames.find((f) => f.rid === 2), 'the workDone after the read');
    const uncaptured = await until(() => frames.find((f) => f.t === 'uncaptured'), 'the read error');
    expect(uncaptured.error.message).toMatch(/scratch file cannot be read .*not a plain file/);
    // What the batch named of the scratch is given back however its read went.
    // Sent once the batch is done with, a few microtasks after the reply: waited for, not looked up.
    expect(await until(() => frames.find((f) => f.t === 'scratchRead'), 'the scratch given back')).toEqual({ t: 'scratchRead', bytes: 16 });
    socket.destroy();
  });

  it("reads a job's ring only within it, not through the link the job can replace, and keeps serving others", async () => {
    service = await startService(['--memory', '1GiB']);
    const { socket, frames, link } = await rawJobWithRing(service.socketPath, 'ring');
    expect(readlinkSync(link)).toBe(`/proc/${service.process.pid}/fd/${readlinkSync(link).split('/').pop()}`);
    unlinkSync(link);
    execFileSync('mkfifo', [link]);
    sendFrame(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.find((f) => f.rid === 1));
    sendFrame(socket, { t: 'batch', scratchBytes: 32, cmds: [
      { op: 'createBuffer', id: 1, size: 16, usage: 8 | 4 },
      { op: 'writeBuffer', id: 1, offset: 0, data: { scratch: 0, length: 16 } },
      { op: 'writeBuffer', id: 1, offset: 0, data: { scratch: 256 * 1024 * 1024 - 8, length: 16 } },
      { op: 'workDone', rid: 2 },
    ] });
    await until(() => frames.find((f) => f.rid === 2), 'the workDone after the reads');
    const errors = frames.filter((f) => f.t === 'uncaptured').map((f) => f.error.message);
    // The first read came from the ring (the FIFO was never opened); the second passed its end.
    expect(errors).toEqual([expect.stringMatching(/scratch ring cannot be read at \[268435448, 268435464\): it holds 268435456 bytes/)]);
    expect(await until(() => frames.find((f) => f.t === 'scratchRead'), 'the scratch given back')).toEqual({ t: 'scratchRead', bytes: 32 });
    // A job killed in the middle of its uploads harms no one else's.
    // The job's own process is killed (its pid from the service), not the `salus run` that waits on it.
    const killed = service.startJob(['--name', 'doomed', join(ROOT, 'test/fixtures/jobs/repeatedUpload.js'), '--', '--mib', '32', '--times', '1000']);
    const doomed = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'doomed' && j.state === 'running' && j.pid));
    const other = service.cli(['run', join(ROOT, 'test/fixtures/jobs/bigUpload.js'), '--', '--mib', '24']);
    await new Promise((resolve) => setTimeout(resolve, 500));
    process.kill(doomed.pid, 'SIGKILL');
    await killed.done;
    const result = await other;
    expect(result.code, result.stderr).toBe(0);
    expect(lastJson(result.stdout)).toEqual({ bytes: 24 * 1024 * 1024, bad: 0 });
    socket.destroy();
  });

  it("refuses a file that is not the job's own", async () => {
    service = await startService(['--memory', '64MiB']);
    const socket = connect(service.socketPath);
    await new Promise((resolve) => socket.once('connect', resolve));
    const decoder = new FrameDecoder();
    const frames: any[] = [];
    socket.on('data', (chunk) => frames.push(...decoder.push(chunk).map((f) => f.header)));
    const send = (header: unknown) => sendFrame(socket, header);
    const until = async (pick: () => any) => {
      for (let i = 0; i < 500; i++) { const v = pick(); if (v) return v; await new Promise((r) => setTimeout(r, 10)); }
      throw new Error(`no answer; got ${JSON.stringify(frames)}`);
    };
    send({ t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'rogue' });
    const welcome = await until(() => frames.find((f) => f.t === 'welcome'));
    expect(welcome.bulkDir).toBeTruthy();
    // Another job's file, planted where the service looks.
    writeFileSync(join(welcome.bulkDir, 'job-99-1'), new Uint8Array(16));
    send({ t: 'requestDevice', rid: 1 });
    await until(() => frames.find((f) => f.rid === 1));
    send({ t: 'batch', cmds: [
      { op: 'createBuffer', id: 1, size: 16, usage: 8 | 4 },
      { op: 'writeBuffer', id: 1, offset: 0, data: { file: 'job-99-1', length: 16 } },
      { op: 'writeBuffer', id: 1, offset: 0, data: { file: '../../etc-passwd-1', length: 16 } },
    ] });
    const errors = await until(() => {
      const found = frames.filter((f) => f.t === 'uncaptured' || f.t === 'error');
      return found.length >= 2 && found;
    });
    const text = errors.map((f: any) => f.error?.message ?? f.message).join('\n');
    expect(text).toMatch(/does not belong to job-1/);
    expect(text).toMatch(/malformed command/);
    expect(existsSync(join(welcome.bulkDir, 'job-99-1'))).toBe(true);
    socket.destroy();
  });
});
