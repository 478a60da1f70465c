/**
 * A job picks its objects' ids (as dawn_wire's client does), so it could name a
 * live id again. The service never overwrites a live object: the command is a
 * validation error of that job, the object and its memory stay as they were,
 * and releasing it still returns every byte. And a job cannot flood the
 * service's log with malformed commands.
 */
import { describe, expect, it } from 'vitest';
import { startServicePerTest, type TestService } from '../helpers/service.js';
import { rawSocket, sendFrame, until } from '../helpers/rawSocket.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

const MiB = 1 << 20;
let service: TestService | null = null;
const startService = startServicePerTest();

describe('a live id named again', () => {
  it('is refused as a validation error; the live object and its memory stay, and release returns them', async () => {
    service = await startService(['--memory', '64MiB']);
    const rogue = await rawSocket(service.socketPath);
    sendFrame(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'reuser' });
    sendFrame(rogue.socket, { t: 'requestDevice', rid: 1 });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 1), 'the device');
    const jobId = rogue.frames.find((f) => f.t === 'welcome').jobId;
    const holds = async () => (await service!.json<any>(['memory'])).jobs.find((j: any) => j.id === jobId)?.persistentBytes ?? 0;

    sendFrame(rogue.socket, { t: 'batch', cmds: [
      { op: 'createBuffer', id: 10, size: 4 * MiB, usage: 0x88 },
      { op: 'workDone', rid: 2 },
    ] });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 2), 'the buffer');
    expect(await holds()).toBe(4 * MiB);

    sendFrame(rogue.socket, { t: 'batch', cmds: [
      { op: 'createBuffer', id: 10, size: 8 * MiB, usage: 0x88 },
      { op: 'createShaderModule', id: 10, code: '@compute @workgroup_size(1) fn main() {}' },
      { op: 'createComputePipeline', id: 10, layout: 'auto', module: 10, entryPoint: 'main', rid: 3 },
      { op: 'workDone', rid: 4 },
    ] });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 4), 'the batch to finish');
    const refusals = rogue.frames.filter((f) => f.t === 'uncaptured' && /id 10 is already in use by a live buffer/.test(f.error?.message));
    expect(refusals.length).toBeGreaterThanOrEqual(2);
    expect(rogue.frames.find((f) => f.t === 'reply' && f.rid === 3)?.error?.message).toMatch(/already in use/);
    // Still the first buffer, whole and counted once.
    expect(await holds()).toBe(4 * MiB);

    sendFrame(rogue.socket, { t: 'batch', cmds: [{ op: 'release', id: 10 }, { op: 'workDone', rid: 5 }] });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 5), 'the release');
    expect(await holds()).toBe(0);
    expect((await service.json<any>(['memory'])).usedBytes).toBe(0);
    rogue.socket.destroy();
  });
});

describe('a flood of malformed commands', () => {
  it('is a validation error each for the job, but only the first ten reach the service log', async () => {
    service = await startService(['--memory', '64MiB']);
    const rogue = await rawSocket(service.socketPath);
    sendFrame(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'flooder' });
    sendFrame(rogue.socket, { t: 'requestDevice', rid: 1 });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 1), 'the device');
    const cmds: unknown[] = Array.from({ length: 500 }, (_, i) => ({ op: 'createBuffer', id: 100 + i, size: -1, usage: 'x' }));
    sendFrame(rogue.socket, { t: 'batch', cmds: [...cmds, { op: 'workDone', rid: 2 }] });
    await until(() => rogue.frames.find((f) => f.t === 'reply' && f.rid === 2), 'the batch');
    await until(() => rogue.frames.filter((f) => f.t === 'uncaptured').length >= 500, 'an error per command');
    const logged = service.log().split('\n').filter((line) => /^salus: job-\d+: malformed command #/.test(line));
    expect(logged).toHaveLength(10);
    expect(service.log()).toMatch(/more malformed commands follow; only the first 10 are logged/);
    rogue.socket.destroy();
  });
});
