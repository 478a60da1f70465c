/**
 * ServiceConnection's batching (and its devices' channels) against a minimal
 * fake service on a real Unix socket: what reaches the service, in which frame, and when.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceConnection } from '../../../core/client/connection.js';
import { DeviceChannel } from '../../../core/client/remote/channel.js';
import { encodeFrame, FrameDecoder } from '../../../core/protocol/frames.js';
import { decodeCommands } from '../../../core/protocol/commandCodec.js';
import { PROTOCOL_VERSION } from '../../../core/protocol/messages.js';

interface FakeService {
  socketPath: string;
  /** Every batch's commands, in arrival order. */
  batches: unknown[][];
  server: Server;
  peers: Socket[];
}

let dir: string;
let fake: FakeService;
let connection: ServiceConnection | null = null;

async function startFake(): Promise<FakeService> {
  const socketPath = join(dir, 'fake.sock');
  const batches: unknown[][] = [];
  const peers: Socket[] = [];
  const server = createServer((socket) => {
    peers.push(socket);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk) => {
      for (const { header, payload } of decoder.push(chunk)) {
        const message = header as { t: string; commandBytes?: number };
        if (message.t === 'hello') {
          const adapter = { info: { vendor: 'v', architecture: 'a', device: 'd', description: 'fake', backend: 'none', isSoftware: true, features: [] }, limits: {}, features: [] };
          for (const part of encodeFrame({ t: 'welcome', protocol: PROTOCOL_VERSION, jobId: 'job-1', adapter, version: 'test' })) socket.write(part);
        } else if (message.t === 'batch') {
          batches.push(decodeCommands(payload.subarray(0, message.commandBytes)).cmds);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return { socketPath, batches, server, peers };
}

/** Resolves after `ms` of timers only: no await of the connection in between. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resolves once `count` batches reached the fake (timers only; up to 5 s, however loaded the machine), then
 * 20 ms more so a batch too many shows in the test's expectation.
 */
async function arrived(count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (fake.batches.length < count && Date.now() < deadline) await sleep(5);
  await sleep(20);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'salus-conn-'));
  fake = await startFake();
  connection = await ServiceConnection.open(fake.socketPath, { role: 'job', name: 't' });
});

afterEach(async () => {
  connection?.close();
  for (const peer of fake.peers) peer.destroy();
  await new Promise((resolve) => fake.server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('ServiceConnection batching', () => {
  it('sends recorded work within one macrotask, though the job only waits on a timer', async () => {
    connection!.record({ op: 'createCommandEncoder', id: connection!.allocateId() });
    connection!.record({ op: 'pushErrorScope', filter: 'validation' });
    expect(fake.batches).toEqual([]);
    await arrived(1);
    expect(fake.batches).toEqual([[{ op: 'createCommandEncoder', id: 1 }, { op: 'pushErrorScope', filter: 'validation' }]]);
  });

  it('keeps commands of one synchronous stretch in one batch, and an explicit flush sends at once', async () => {
    for (let i = 0; i < 3; i++) connection!.record({ op: 'destroy', id: i + 1 });
    connection!.flush();
    connection!.record({ op: 'destroy', id: 9 });
    await arrived(2);
    expect(fake.batches.map((b) => b.length)).toEqual([3, 1]);
  });

  it('lets released ids ride at the end of the next batch, never alone and never first', async () => {
    connection!.release(7);
    await sleep(50);
    expect(fake.batches).toEqual([]);
    connection!.record({ op: 'destroy', id: 3 });
    connection!.release(8);
    await arrived(1);
    expect(fake.batches).toEqual([[{ op: 'destroy', id: 3 }, { op: 'release', id: 7 }, { op: 'release', id: 8 }]]);
  });

  it('after device.destroy() sends nothing more for that device, and refuses its replies at once', async () => {
    const first = new DeviceChannel(connection!, connection!.allocateDeviceId());
    const second = new DeviceChannel(connection!, connection!.allocateDeviceId());
    first.record({ op: 'configureDevice', device: first.deviceId, features: [], limits: {} });
    second.record({ op: 'configureDevice', device: second.deviceId, features: [], limits: {} });
    first.record({ op: 'destroyDevice' });
    first.markDeviceDestroyed();
    first.record({ op: 'destroy', id: 1 });
    await expect(first.expectReply(first.allocateRid())).rejects.toThrow(/destroyed/);
    expect(first.deviceLost).toBe(true);
    expect(second.deviceLost).toBe(false);
    second.record({ op: 'destroy', id: 2 });
    await arrived(2);
    expect(fake.batches).toEqual([
      [
        { op: 'configureDevice', device: 1, features: [], limits: {} },
        { op: 'configureDevice', device: 2, features: [], limits: {} },
        { op: 'useDevice', device: 1 },
        { op: 'destroyDevice' },
      ],
      [{ op: 'useDevice', device: 2 }, { op: 'destroy', id: 2 }],
    ]);
  });

  it('names the device only when the recording device changes', async () => {
    const a = new DeviceChannel(connection!, connection!.allocateDeviceId());
    const b = new DeviceChannel(connection!, connection!.allocateDeviceId());
    a.record({ op: 'configureDevice', device: a.deviceId, features: [], limits: {} });
    a.record({ op: 'destroy', id: 1 });
    b.record({ op: 'destroy', id: 2 });
    b.record({ op: 'destroy', id: 3 });
    a.record({ op: 'destroy', id: 4 });
    connection!.record({ op: 'iterationBegin' });
    await arrived(1);
    expect(fake.batches).toEqual([[
      { op: 'configureDevice', device: 1, features: [], limits: {} },
      { op: 'destroy', id: 1 },
      { op: 'useDevice', device: 2 }, { op: 'destroy', id: 2 }, { op: 'destroy', id: 3 },
      { op: 'useDevice', device: 1 }, { op: 'destroy', id: 4 },
      { op: 'iterationBegin' },
    ]]);
  });
});

describe('ServiceConnection reads', () => {
  /** Writes `bytes` to the job in pieces of `sizes` (the rest in one), each piece its own read on the job's side. */
  async function writeInPieces(bytes: Uint8Array, sizes: number[]): Promise<void> {
    const peer = fake.peers[0];
    let at = 0;
    for (const size of [...sizes, bytes.byteLength]) {
      if (at >= bytes.byteLength) break;
      peer.write(bytes.subarray(at, Math.min(bytes.byteLength, at + size)));
      at += size;
      await sleep(15);
    }
  }

  const concat = (parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

  it("keeps a reply's payload intact while later reads arrive (the read buffer is reused only when nothing refers to it)", async () => {
    const first = connection!.expectReply(1);
    const second = connection!.expectReply(2);
    const third = connection!.expectReply(3);
    await writeInPieces(concat(encodeFrame({ t: 'reply', rid: 1, result: 'a' }, [new Uint8Array(64).fill(1)])), []);
    const one = await first;
    // A reply without payload, then one split mid-prefix and mid-payload: three more reads.
    await writeInPieces(concat(encodeFrame({ t: 'reply', rid: 2, result: 'b' })), []);
    await writeInPieces(concat(encodeFrame({ t: 'reply', rid: 3, result: 'c' }, [new Uint8Array(5000).fill(3)])), [5, 20]);
    const [two, three] = await Promise.all([second, third]);
    expect([one.result, two.result, three.result]).toEqual(['a', 'b', 'c']);
    expect([...one.payload]).toEqual(new Array(64).fill(1));
    expect(two.payload.byteLength).toBe(0);
    expect([...three.payload]).toEqual(new Array(5000).fill(3));
  });

  it('reassembles replies sent a byte at a time, and several in one read', async () => {
    const replies = [1, 2, 3].map((rid) => connection!.expectReply(rid));
    const bytes = concat([1, 2, 3].flatMap((rid) => encodeFrame({ t: 'reply', rid, result: rid }, [new Uint8Array(rid * 3).fill(rid)])));
    const firstTwo = concat([1, 2].flatMap((rid) => encodeFrame({ t: 'reply', rid, result: rid }, [new Uint8Array(rid * 3).fill(rid)]))).byteLength;
    await writeInPieces(bytes.subarray(0, firstTwo), []);
    const third = bytes.subarray(firstTwo);
    await writeInPieces(third, new Array(third.byteLength).fill(1));
    const got = await Promise.all(replies);
    expect(got.map((r) => [r.result, [...r.payload]])).toEqual([1, 2, 3].map((rid) => [rid, new Array(rid * 3).fill(rid)]));
  });

  it('settles a call that returns nothing from its reply: done, an error thrown or recovered, and at once on a destroyed device', async () => {
    const channel = new DeviceChannel(connection!, connection!.allocateDeviceId());
    const recoverIf = (recover: boolean) => (error: Error) => { if (!recover) throw error; };
    // Settled together: the failed call's rejection is handled as it happens.
    const settled = Promise.allSettled([channel.expectDone(1, recoverIf(false)), channel.expectDone(2, recoverIf(false)), channel.expectDone(3, recoverIf(true))]);
    await writeInPieces(concat([
      ...encodeFrame({ t: 'reply', rid: 1, result: {} }),
      ...encodeFrame({ t: 'reply', rid: 2, error: { code: 3, message: 'no such queue' } }),
      ...encodeFrame({ t: 'reply', rid: 3, error: { code: 3, message: 'lost' } }),
    ]), []);
    const [done, failed, recovered] = await settled;
    expect(done).toEqual({ status: 'fulfilled', value: undefined });
    expect(failed.status === 'rejected' && (failed.reason as Error).message).toBe('no such queue');
    expect(recovered).toEqual({ status: 'fulfilled', value: undefined });
    channel.markDeviceDestroyed();
    await expect(channel.expectDone(4, recoverIf(true))).resolves.toBeUndefined();
    await expect(channel.expectDone(5, recoverIf(false))).rejects.toThrow(/destroyed/);
  });

  it('sends an awaited call recorded alone as its prebuilt frame, and one recorded after other commands in their batch', async () => {
    const channel = new DeviceChannel(connection!, connection!.allocateDeviceId());
    channel.record({ op: 'configureDevice', device: channel.deviceId, features: [], limits: {} });
    channel.recordAndFlush({ op: 'workDone', rid: 7 });
    // Alone, back to back: the second must not change the first's bytes before they are sent.
    channel.recordAndFlush({ op: 'workDone', rid: 8 });
    channel.recordAndFlush({ op: 'workDone', rid: 9 });
    connection!.release(3);
    channel.recordAndFlush({ op: 'workDone', rid: 10 });
    await arrived(4);
    expect(fake.batches).toEqual([
      [{ op: 'configureDevice', device: 1, features: [], limits: {} }, { op: 'workDone', rid: 7 }],
      [{ op: 'workDone', rid: 8 }],
      [{ op: 'workDone', rid: 9 }],
      [{ op: 'workDone', rid: 10 }, { op: 'release', id: 3 }],
    ]);
  });
});
