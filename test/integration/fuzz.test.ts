/**
 * Seeded random command batches from a rogue job: well-formed and malformed
 * commands over a small id space (so they hit real objects), odd sizes,
 * offsets, data ranges and shaders. Whatever it sends, the service keeps
 * serving: it answers every request, a job running beside it finishes with the
 * right numbers, and once the rogue hangs up every byte it held returns.
 */
import { describe, expect, it } from 'vitest';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { lastJson, startServicePerTest, ROOT, type TestService } from '../helpers/service.js';
import { prng } from '../helpers/prng.js';
import { rawSocket, sendFrame as send, until } from '../helpers/rawSocket.js';
import { COMMANDS } from '../../core/protocol/commandTable.js';
import { ErrorCode, PROTOCOL_VERSION } from '../../core/protocol/messages.js';

let service: TestService | null = null;
const startService = startServicePerTest();

const SHADERS = [
  '@group(0) @binding(0) var<storage, read_write> o: array<u32>; @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) i: vec3u) { o[i.x] = i.x; }',
  '@compute @workgroup_size(1) fn main() {}',
  'fn main( { this is not WGSL',
  '@compute @workgroup_size(1024, 1024) fn main() {}',
];
const SIZES = [0, 4, 6, 256, 4096, 65_536, 2 ** 31, 2 ** 40];
const OFFSETS = [0, 4, 3, 256, 2 ** 32];
const COUNTS = [0, 1, 2, 65_535, 65_536, 2 ** 31];

/** One random command over ids 1..24; about one in ten is malformed on purpose. */
function randomCommand(rand: () => number, rid: () => number, payloadBytes: number): Record<string, unknown> {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  // Alternatives are built lazily, so a request id is taken only by the command actually sent.
  const one = (list: (() => Record<string, unknown>)[]) => pick(list)();
  const id = () => 1 + Math.floor(rand() * 24);
  const data = () => (rand() < 0.8 ? [pick([0, 4, 8]), pick([0, 4, 8, payloadBytes, payloadBytes + 4])] : { file: 'job-9-1', length: 4 });
  if (rand() < 0.1) return pick<Record<string, unknown>>([{ op: 'createBuffer', id: -1 }, { op: 'nope' }, { id: 3 }, { op: 'dispatch', pass: 'x' }]);
  switch (pick(['buffer', 'buffer', 'shader', 'pipeline', 'bind', 'encode', 'encode', 'map', 'scope', 'misc'])) {
    case 'buffer':
      return one([
        () => ({ op: 'createBuffer', id: id(), size: pick(SIZES), usage: Math.floor(rand() * 1024), mappedAtCreation: rand() < 0.2 }),
        () => ({ op: 'writeBuffer', id: id(), offset: pick(OFFSETS), data: data() }),
        () => ({ op: 'destroy', id: id() }),
        () => ({ op: 'release', id: id() }),
      ]);
    case 'shader':
      return { op: 'createShaderModule', id: id(), code: pick(SHADERS) };
    case 'pipeline':
      return rand() < 0.5
        ? { op: 'createComputePipeline', id: id(), layout: 'auto', module: id(), entryPoint: 'main', ...(rand() < 0.5 ? { rid: rid() } : {}) }
        : { op: 'getBindGroupLayout', id: id(), pipeline: id(), index: pick([0, 1, 4]) };
    case 'bind':
      return { op: 'createBindGroup', id: id(), layout: id(), entries: [{ binding: pick([0, 1]), buffer: id(), offset: pick(OFFSETS) }] };
    case 'encode':
      return one([
        () => ({ op: 'createCommandEncoder', id: id() }),
        () => ({ op: 'beginComputePass', id: id(), encoder: id() }),
        () => ({ op: 'setPipeline', pass: id(), pipeline: id() }),
        () => ({ op: 'setBindGroup', pass: id(), index: pick([0, 3, 9]), bindGroup: id() }),
        () => ({ op: 'dispatch', pass: id(), x: pick(COUNTS), y: 1, z: 1 }),
        () => ({ op: 'dispatchIndirect', pass: id(), buffer: id(), offset: pick(OFFSETS) }),
        () => ({ op: 'endPass', pass: id() }),
        () => ({ op: 'copyBufferToBuffer', encoder: id(), src: id(), srcOffset: pick(OFFSETS), dst: id(), dstOffset: 0, size: pick(SIZES) }),
        () => ({ op: 'clearBuffer', encoder: id(), buffer: id() }),
        () => ({ op: 'finish', encoder: id(), id: id() }),
        () => ({ op: 'submit', commandBuffers: [id(), id()] }),
      ]);
    case 'map':
      return one([
        () => ({ op: 'mapAsync', rid: rid(), id: id(), mode: pick([1, 2, 3]), offset: pick(OFFSETS) }),
        () => ({ op: 'readMapped', rid: rid(), id: id(), offset: 0, size: pick(SIZES) }),
        () => ({ op: 'writeMapped', id: id(), offset: pick(OFFSETS), data: data() }),
        () => ({ op: 'unmap', id: id() }),
      ]);
    case 'scope':
      return one([
        () => ({ op: 'pushErrorScope', filter: pick(['validation', 'out-of-memory', 'internal']) }),
        () => ({ op: 'popErrorScope', rid: rid() }),
      ]);
    default:
      return one([
        () => ({ op: 'workDone', rid: rid() }),
        () => ({ op: 'setLabel', id: id(), label: 'fuzzed' }),
        () => ({ op: 'compilationInfo', rid: rid(), id: id() }),
        () => ({ op: 'iterationBegin' }),
        () => ({ op: 'iterationEnd', rid: rid() }),
      ]);
  }
}

/** A raw job connection, with the replies it got by request id. */
async function rawJob(path: string): Promise<{ socket: Socket; replies: Map<number, any> }> {
  const { socket, frames } = await rawSocket(path);
  return {
    socket,
    get replies() {
      return new Map(frames.filter((f) => f.t === 'reply' && typeof f.rid === 'number').map((f) => [f.rid as number, f]));
    },
  };
}

describe('requests on objects that do not exist', () => {
  it('are answered with an error instead of hanging the job', async () => {
    service = await startService(['--memory', '64MiB']);
    const rogue = await rawJob(service.socketPath);
    send(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'dangling' });
    send(rogue.socket, { t: 'requestDevice', rid: 1 });
    await until(() => rogue.replies.get(1), 'the device');
    send(rogue.socket, { t: 'batch', cmds: [
      { op: 'createComputePipeline', id: 2, rid: 2, layout: 'auto', module: 999, entryPoint: 'main' },
      { op: 'compilationInfo', rid: 3, id: 998 },
    ] });
    // createComputePipelineAsync rejects with a pipeline error; compilationInfo's promise rejects.
    expect(await until(() => rogue.replies.get(2), 'the pipeline')).toMatchObject({ result: { error: { type: 'validation' } } });
    expect(await until(() => rogue.replies.get(3), 'the compilation info')).toMatchObject({ error: { message: expect.stringMatching(/998/) } });
    rogue.socket.destroy();
  });

  it('answers a requestDevice whose fields are wrong, with the reason', async () => {
    service = await startService(['--memory', '64MiB']);
    const rogue = await rawJob(service.socketPath);
    send(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'bad device' });
    send(rogue.socket, { t: 'requestDevice', rid: 4, requiredLimits: { maxBufferSize: 'lots' } });
    expect(await until(() => rogue.replies.get(4), 'the reply')).toMatchObject({ error: { message: expect.stringMatching(/bad message: requiredLimits/) } });
    rogue.socket.destroy();
  });

  it('answers the requests of a batch sent before requestDevice, which it refuses', async () => {
    service = await startService(['--memory', '64MiB']);
    const rogue = await rawJob(service.socketPath);
    send(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'early' });
    send(rogue.socket, { t: 'batch', cmds: [{ op: 'createBuffer', id: 1, size: 16, usage: 0x9 }, { op: 'workDone', rid: 7 }] });
    expect(await until(() => rogue.replies.get(7), 'the early workDone')).toMatchObject({ error: { message: expect.stringMatching(/before requestDevice/) } });
    rogue.socket.destroy();
  });

  it('answers only request ids a caller can hold: never 0, never one the record cuts off', async () => {
    service = await startService(['--memory', '64MiB']);
    const { socket, frames } = await rawSocket(service.socketPath);
    send(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'odd rids' });
    send(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.some((f) => f.rid === 1), 'the device');
    // workDone with rid 0; a workDone record of its header alone (the rid cut off); workDone 2.
    const WORK_DONE = COMMANDS.workDone.code;
    const commands = new Uint32Array([WORK_DONE | (2 << 8), 0, WORK_DONE | (1 << 8), WORK_DONE | (2 << 8), 2]);
    send(socket, { t: 'batch', commandBytes: commands.byteLength }, [new Uint8Array(commands.buffer)]);
    await until(() => frames.some((f) => f.rid === 2), 'the valid workDone');
    // Both malformed commands are the job's validation errors, and neither is answered.
    await until(() => frames.filter((f) => f.t === 'uncaptured').length >= 2, 'two validation errors');
    expect(frames.filter((f) => f.t === 'reply').map((f) => f.rid)).toEqual([1, 2]);
    socket.destroy();
  });

  it('still says why it drops a stream it cannot frame when replies are queued on it', async () => {
    service = await startService(['--memory', '64MiB']);
    const { socket, frames, closed } = await rawSocket(service.socketPath);
    send(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'unframeable' });
    send(socket, { t: 'requestDevice', rid: 1 });
    await until(() => frames.some((f) => f.rid === 1), 'the device');
    // Not reading: a 4 MiB readback stays queued on the service's side of the socket.
    socket.pause();
    send(socket, { t: 'batch', cmds: [{ op: 'createBuffer', id: 1, size: 4 * 1024 * 1024, usage: 0x9 }, { op: 'mapAsync', rid: 2, id: 1, mode: 1, offset: 0 }] });
    await new Promise((r) => setTimeout(r, 1000));
    const prefix = new Uint8Array(8);
    new DataView(prefix.buffer).setUint32(0, 8, true);
    new DataView(prefix.buffer).setUint32(4, 100, true); // a header longer than its body
    socket.write(prefix);
    await new Promise((r) => setTimeout(r, 200));
    socket.resume();
    await closed;
    expect(frames.find((f) => f.t === 'error')).toMatchObject({ code: ErrorCode.BadFrame, message: expect.stringMatching(/does not fit/) });
    expect(frames.some((f) => f.rid === 2)).toBe(true);
  });
});

describe('fuzzed command batches', () => {
  it('never stop the service, never touch another job, and give every byte back', async () => {
    service = await startService(['--memory', '128MiB']);
    const args = [join(ROOT, 'test/fixtures/jobs/steps.js'), '--', '--iterations', '40', '--work', '16'];
    const expected = lastJson((await service.cli(['run', '--local', ...args])).stdout).checksum;
    const job = service.startJob(args);

    const rogue = await rawJob(service.socketPath);
    send(rogue.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'fuzzer' });
    send(rogue.socket, { t: 'requestDevice', rid: 1 });
    await until(() => rogue.replies.get(1), 'the device');

    const rand = prng(Number(process.env.FUZZ_SEED ?? 2026));
    let nextRid = 2;
    const asked: number[] = [];
    const requests = new Map<number, Record<string, unknown>>();
    const rid = () => { asked.push(nextRid); return nextRid++; };
    for (let batch = 0; batch < 60; batch++) {
      const payload = new Uint8Array(8 + Math.floor(rand() * 8)).fill(batch);
      const cmds = Array.from({ length: 1 + Math.floor(rand() * 30) }, () => randomCommand(rand, rid, payload.byteLength));
      for (const cmd of cmds) if (typeof cmd.rid === 'number') requests.set(cmd.rid, cmd);
      send(rogue.socket, { t: 'batch', cmds }, [payload]);
    }
    // Every request is answered (a reply or an error reply), the last one after all the rest replayed.
    const last = rid();
    send(rogue.socket, { t: 'batch', cmds: [{ op: 'iterationEnd' }, { op: 'workDone', rid: last }] });
    await until(() => rogue.replies.get(last), 'the final workDone', 30_000);
    await until(() => { const replies = rogue.replies; return asked.every((r) => replies.has(r)); }, 'a reply to every request')
      .catch(() => {
        const replies = rogue.replies;
        const missing = asked.filter((r) => !replies.has(r)).map((r) => JSON.stringify(requests.get(r) ?? r));
        throw new Error(`no reply to ${missing.join(', ')}`);
      });

    // Both paths were exercised: some requests worked, some were refused.
    const replies = rogue.replies;
    const answers = asked.map((r) => replies.get(r) as { error?: unknown; result?: { error?: unknown } });
    const refused = answers.filter((a) => a.error || a.result?.error).length;
    expect(refused).toBeGreaterThan(0);
    expect(answers.length - refused).toBeGreaterThan(0);

    const result = await job.done;
    expect(result.code, result.stderr).toBe(0);
    expect(lastJson(result.stdout).checksum).toBe(expected);

    // The fuzzer held buffers; once it hangs up (and the other job is done) every byte returns.
    rogue.socket.destroy();
    await service.waitForJobs((jobs) => (jobs.every((j) => j.state !== 'running' && j.state !== 'queued') ? true : undefined));
    const deadline = Date.now() + 10_000;
    let memory = await service.json<any>(['memory']);
    while (memory.usedBytes !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      memory = await service.json<any>(['memory']);
    }
    expect(memory.usedBytes).toBe(0);
    expect(service.process.exitCode).toBeNull();
    const fuzzer = (await service.json<any[]>(['jobs'])).find((j) => j.name === 'fuzzer');
    expect(fuzzer).toBeDefined();
  }, 120_000);
});
