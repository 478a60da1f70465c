/** Per-connection bounds: when reading pauses and resumes, and which hard limit a peer passed. */
import { createServer, connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONNECTION_LIMITS, ConnectionFlow, NOTHING_HELD, limitExceeded, pauseReason } from '../../../core/server/connectionLimits.js';

const MiB = 1024 * 1024;

describe('pauseReason', () => {
  it('pauses past any soft bound and not before', () => {
    expect(pauseReason({ bytes: 64 * MiB, commands: 65_536, batches: 31 }, 64 * MiB)).toBeNull();
    expect(pauseReason({ bytes: 64 * MiB + 1, commands: 0, batches: 0 }, 0)).toMatch(/queued bytes/);
    expect(pauseReason({ bytes: 0, commands: 65_537, batches: 0 }, 0)).toMatch(/queued commands/);
    expect(pauseReason({ bytes: 0, commands: 0, batches: 32 }, 0)).toMatch(/queued batches/);
    expect(pauseReason({ bytes: 0, commands: 0, batches: 0 }, 64 * MiB + 1)).toMatch(/not read by the peer/);
  });
});

describe('limitExceeded', () => {
  it('names the limit and what to do', () => {
    expect(limitExceeded(CONNECTION_LIMITS.maxPendingRequests, CONNECTION_LIMITS.maxReplyBytes, { liveObjects: CONNECTION_LIMITS.maxLiveObjects, errorScopes: CONNECTION_LIMITS.maxErrorScopes })).toBeNull();
    expect(limitExceeded(0, 1024 * MiB + 1, NOTHING_HELD)).toMatch(/1024 MiB of replies unread.*read replies as they come/);
    expect(limitExceeded(65_537, 0, NOTHING_HELD)).toMatch(/65536 requests awaiting replies; await some/);
    expect(limitExceeded(0, 0, { liveObjects: 1_000_001, errorScopes: 0 })).toMatch(/1000000 live GPU objects; destroy or drop/);
    expect(limitExceeded(0, 0, { liveObjects: 0, errorScopes: 1_000_001 })).toMatch(/1000000 error scopes pushed and not popped; pop each/);
  });
});

describe('ConnectionFlow on a real socket', () => {
  it('stops reading while work piles up, reads again once it is replayed, and reports a hard limit once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'salus-flow-'));
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.on('connection', resolve));
    await new Promise<void>((resolve) => server.listen(join(dir, 's.sock'), resolve));
    const client = connect(join(dir, 's.sock'));
    const socket = await accepted;
    socket.on('data', () => undefined);
    let live = 0;
    const limits: string[] = [];
    const flow = new ConnectionFlow(socket, () => ({ liveObjects: live, errorScopes: 0 }), (message) => limits.push(message));
    try {
      let replayed!: () => void;
      flow.track(10, 65 * MiB, 0, new Promise<void>((resolve) => { replayed = resolve; }));
      expect(socket.isPaused()).toBe(true);
      replayed();
      await new Promise((r) => setTimeout(r, 10));
      expect(socket.isPaused()).toBe(false);
      expect(flow.whenWritable()).toBeNull();
      live = CONNECTION_LIMITS.maxLiveObjects + 1;
      flow.track(1, 0, 0, undefined);
      flow.track(1, 0, 0, undefined);
      expect(limits).toHaveLength(1);
      expect(limits[0]).toMatch(/live GPU objects/);
    } finally {
      client.destroy();
      socket.destroy();
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
