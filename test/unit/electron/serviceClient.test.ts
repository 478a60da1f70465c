// ServiceClient's connection states over a real socket and the real
// ServiceConnection, against a scripted peer that speaks the service's framing
// but misbehaves on cue (the happy path against a real service is in
// desktopService.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder } from '../../../core/protocol/frames.js';
import { PROTOCOL_VERSION } from '../../../core/protocol/messages.js';
import { ServiceClient } from '../../../electron/serviceClient.js';

type Script = (call: { rid: number; method: string; params: unknown[] }, socket: Socket) => void;

let dir: string;
let server: Server;
let socketPath: string;
const sockets = new Set<Socket>();

/** Listens on a private socket; welcomes every hello and hands each call to `script`. */
async function peer(script: Script): Promise<void> {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const decoder = new FrameDecoder();
    const send = (header: object) => { for (const chunk of encodeFrame(header)) socket.write(chunk); };
    socket.on('data', (chunk) => {
      for (const frame of decoder.push(chunk)) {
        const message = frame.header as { t: string; rid: number; method: string; params: unknown[] };
        if (message.t === 'hello') send({ t: 'welcome', protocol: PROTOCOL_VERSION, adapter: {}, version: 'test' });
        else if (message.t === 'call') script(message, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
}

const reply = (socket: Socket, header: object) => { for (const chunk of encodeFrame({ t: 'reply', ...header })) socket.write(chunk); };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'salus-client-'));
  socketPath = join(dir, 'peer.sock');
});
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

function watch(client: ServiceClient): string[] {
  const states: string[] = [];
  client.on('connection', (state: string) => states.push(state));
  return states;
}

describe('ServiceClient', () => {
  it('opens, subscribes, forwards calls and relays events', async () => {
    await peer((call, socket) => {
      if (call.method === 'subscribe') {
        for (const chunk of encodeFrame({ t: 'event', event: { type: 'policy', policy: { name: 'FIFO', params: {}, knobs: [] } } })) socket.write(chunk);
        reply(socket, { rid: call.rid, result: null });
      } else {
        reply(socket, { rid: call.rid, result: { echoed: call.method, params: call.params } });
      }
    });
    const client = new ServiceClient();
    const states = watch(client);
    const events: unknown[] = [];
    client.on('event', (event) => events.push(event));
    await client.connect(socketPath);
    expect(states).toEqual(['connecting', 'open']);
    expect(events).toEqual([{ type: 'policy', policy: { name: 'FIFO', params: {}, knobs: [] } }]);
    await expect(client.call('setPriority', 'j1', 4)).resolves.toEqual({ echoed: 'setPriority', params: ['j1', 4] });
    client.disconnect();
    expect(states).toEqual(['connecting', 'open', 'closed']);
    await expect(client.call('snapshot')).rejects.toThrow(/not connected/);
  });

  it('does not stay half-open when subscribing fails', async () => {
    await peer((call, socket) => reply(socket, { rid: call.rid, error: { code: 500, message: 'subscribe broke' } }));
    const client = new ServiceClient();
    const states = watch(client);
    await expect(client.connect(socketPath)).rejects.toThrow(/subscribe broke/);
    expect(states).toEqual(['connecting', 'closed']);
    expect(client.state).toBe('closed');
  });

  it('goes to closed when the service hangs up, and refuses calls until reconnected', async () => {
    await peer((call, socket) => reply(socket, { rid: call.rid, result: null }));
    const client = new ServiceClient();
    const states = watch(client);
    await client.connect(socketPath);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => client.once('connection', resolve));
    expect(states).toEqual(['connecting', 'open', 'closed']);
    await expect(client.call('snapshot')).rejects.toThrow(/not connected/);
    await client.connect(socketPath);
    expect(client.state).toBe('open');
    client.disconnect();
  });

  it('says so when nothing listens', async () => {
    const client = new ServiceClient();
    const states = watch(client);
    await expect(client.connect(join(dir, 'nobody.sock'))).rejects.toThrow(/no Salus service is listening/);
    expect(states).toEqual(['connecting', 'closed']);
  });
});
