/**
 * Readbacks through the job's scratch ring (core/executor/ringReadback.ts,
 * core/client/remote/ringHold.ts): a mapped range must come back byte for byte
 * as on a local device, with the ring and without it (no addon in the service,
 * or in the job alone), with every range detached at unmap and destroy; a job's
 * ring offsets are checked against its own ring only; a job killed in the middle
 * of its readbacks harms no one else's.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { lastJson, ROOT, startService, type TestService } from '../helpers/service.js';
import { controlAnswers, rawJobWithRing, rawSocket, sendFrame, until } from '../helpers/rawSocket.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';
import { SCRATCH_MAX_BYTES } from '../../core/platform/bulkDir.js';

const FIXTURE = join(ROOT, 'test/fixtures/jobs/ringReadback.js');
/** Past one piece of the wire (32 MiB), so the ring also takes `readMapped` pieces. */
const MIB = 40;
const MAP_READ = 1;
const MAP_WRITE = 2;
const COPY_SRC = 4;
const COPY_DST = 8;

let service: TestService | null = null;
afterEach(async () => {
  await service?.stop();
  service = null;
});

describe.runIf(process.platform === 'linux' && existsSync('/dev/shm'))('readbacks through the scratch ring', () => {
  let local: Record<string, unknown>;
  beforeAll(async () => {
    const helper = await startService(['--memory', '64MiB']);
    try {
      const result = await helper.cli(['run', '--local', FIXTURE, '--', '--mib', String(MIB)], { timeoutMs: 120_000 });
      expect(result.code, result.stderr).toBe(0);
      local = lastJson(result.stdout);
    } finally {
      await helper.stop();
    }
    expect(local.ringMapped).toBe(false);
  }, 180_000);

  const paths = [
    ['the ring, viewed in place', {}, {}, true],
    ['the reply frames (no addon in the service: SALUS_SHM=0)', { SALUS_SHM: '0' }, {}, false],
    ['the ring, read with plain reads (no addon in the job)', {}, { SALUS_SHM: '0' }, false],
  ] as const;
  for (const [path, serviceEnv, jobEnv, ringMapped] of paths) {
    it(`gives back ${MIB} MiB byte for byte as a local device does, through ${path}`, async () => {
      service = await startService(['--memory', '1GiB'], serviceEnv);
      const job = service.startJob([FIXTURE, '--', '--mib', String(MIB)], jobEnv);
      const result = await job.done;
      expect(result.code, result.stderr).toBe(0);
      expect(lastJson(result.stdout)).toEqual({ ...local, ringMapped });
    }, 120_000);
  }

  it("writes only within the job's own ring, at the offsets it named, and says why it will not", async () => {
    service = await startService(['--memory', '1GiB']);
    const { socket, frames, link } = await rawJobWithRing(service.socketPath, 'hostile');
    sendFrame(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.find((f) => f.rid === 1));
    const pattern = new Uint8Array(64).map((_, i) => 200 - i);
    const at = 4096;
    sendFrame(socket, { t: 'batch', cmds: [
      { op: 'createBuffer', id: 1, size: 64, usage: MAP_WRITE | COPY_SRC, mappedAtCreation: true },
      { op: 'writeMapped', id: 1, offset: 0, data: [0, 64] },
      { op: 'unmap', id: 1 },
      { op: 'mapAsync', rid: 2, id: 1, mode: MAP_WRITE, offset: 0, ring: at },
    ] }, [pattern]);
    const mapped = await until(() => frames.find((f) => f.rid === 2), 'the mapAsync reply');
    expect(mapped).toEqual({ t: 'reply', rid: 2, result: { offset: 0, size: 64, ring: at } });
    const fd = openSync(link, 'r');
    const seen = new Uint8Array(64);
    readSync(fd, seen, 0, 64, at);
    closeSync(fd);
    expect([...seen]).toEqual([...pattern]);

    // Past the ring's end, a piece of a range that is not mapped, and a map of what is not there: errors, nothing written.
    sendFrame(socket, { t: 'batch', cmds: [
      { op: 'unmap', id: 1 },
      { op: 'mapAsync', rid: 3, id: 1, mode: MAP_WRITE, offset: 0, ring: SCRATCH_MAX_BYTES - 32 },
      { op: 'readMapped', rid: 4, id: 1, offset: 0, size: 64, ring: 0 },
      { op: 'mapAsync', rid: 5, id: 99, mode: MAP_READ, offset: 0, ring: 0 },
      { op: 'createBuffer', id: 2, size: 64, usage: MAP_READ | COPY_DST },
      { op: 'mapAsync', rid: 6, id: 2, mode: MAP_READ, offset: 0, ring: 2 ** 52 },
      { op: 'workDone', rid: 7 },
    ] });
    await until(() => frames.find((f) => f.rid === 7), 'the workDone after them');
    const errors = Object.fromEntries([3, 4, 5, 6].map((rid) => [rid, frames.find((f) => f.rid === rid)?.error?.message]));
    expect(errors[3]).toMatch(/scratch ring cannot take \[268435424, 268435488\): it holds 268435456 bytes/);
    expect(errors[4]).toMatch(/readMapped: \[0, 64\) is not a piece of the mapped range/);
    expect(errors[5]).toMatch(/99/);
    expect(errors[6]).toMatch(/scratch ring cannot take \[4503599627370496, /);
    const uncaptured = frames.filter((f) => f.t === 'uncaptured').map((f) => f.error.message);
    expect(uncaptured).toEqual(expect.arrayContaining([expect.stringMatching(/scratch ring cannot take \[268435424/)]));
    // The ring still holds the job's own bytes where the refused maps would have written.
    const again = new Uint8Array(64);
    const fd2 = openSync(link, 'r');
    readSync(fd2, again, 0, 64, at);
    closeSync(fd2);
    expect([...again]).toEqual([...pattern]);
    // The buffer is still the job's to map (the refused map never started).
    sendFrame(socket, { t: 'batch', cmds: [{ op: 'mapAsync', rid: 8, id: 1, mode: MAP_WRITE, offset: 0, size: 64, ring: 0 }] });
    expect(await until(() => frames.find((f) => f.rid === 8))).toEqual({ t: 'reply', rid: 8, result: { offset: 0, size: 64, ring: 0 } });
    socket.destroy();
    await controlAnswers(service.socketPath);
  }, 60_000);

  it('refuses a readback into a ring from a job that has none, and sends the bytes to those who ask for them', async () => {
    service = await startService(['--memory', '64MiB'], { SALUS_SHM: '0' });
    const { socket, frames } = await rawSocket(service.socketPath);
    sendFrame(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'no ring' });
    await until(() => frames.find((f) => f.t === 'welcome'));
    sendFrame(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.find((f) => f.rid === 1));
    sendFrame(socket, { t: 'batch', cmds: [
      { op: 'createBuffer', id: 1, size: 64, usage: MAP_READ | COPY_DST },
      { op: 'mapAsync', rid: 2, id: 1, mode: MAP_READ, offset: 0, ring: 0 },
      { op: 'mapAsync', rid: 3, id: 1, mode: MAP_READ, offset: 0 },
    ] });
    const refused = await until(() => frames.find((f) => f.rid === 2));
    expect(refused.error.message).toMatch(/this job has no scratch ring to read back into/);
    expect(await until(() => frames.find((f) => f.rid === 3))).toEqual({ t: 'reply', rid: 3, result: { offset: 0, size: 64 } });
    socket.destroy();
  });

  it('keeps serving others when a job is killed in the middle of its readbacks', async () => {
    service = await startService(['--memory', '1GiB']);
    const doomed = service.startJob(['--name', 'doomed', FIXTURE, '--', '--mib', '64', '--repeat', '1000']);
    await until(() => doomed.stdout().includes('"reading":true'), 'the doomed job reading back', 60_000);
    const { pid } = await service.waitForJobs((jobs) => jobs.find((j) => j.name === 'doomed' && j.pid));
    const other = service.startJob([FIXTURE, '--', '--mib', String(MIB)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.kill(pid, 'SIGKILL');
    await doomed.done;
    const result = await other.done;
    expect(result.code, result.stderr).toBe(0);
    expect(lastJson(result.stdout)).toEqual({ ...local, ringMapped: true });
    await controlAnswers(service.socketPath);
  }, 120_000);
});
