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
