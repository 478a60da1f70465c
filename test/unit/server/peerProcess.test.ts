/** Reading `ss -xpnH` and /proc for the process at the other end of a job's socket. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { holdsSocket, identifyPeer, parseUnixSockets, peerPid, verifiedPids } from '../../../core/server/peerProcess.js';

describe('parseUnixSockets', () => {
  it('reads each socket\'s inode, its peer and its holders, paths with spaces included', () => {
    const listing = [
      'u_str ESTAB 0      0      /run/my dir/salus.sock 13590 * 13589 users:(("node",pid=7769,fd=21))',
      'u_str ESTAB 0      0                           * 13589 * 13590 users:(("node",pid=80,fd=20),("node",pid=81,fd=20),("node",pid=80,fd=22))',
      'u_str ESTAB 0      0                           * 502   * 503                                  ',
      'u_str LISTEN 0     511    /run/salus.sock 400 * 0 users:(("node",pid=7769,fd=19))',
      'garbage',
    ].join('\n');
    const sockets = parseUnixSockets(listing);
    expect(sockets.get(13590)).toEqual({ peer: 13589, pids: [7769] });
    expect(sockets.get(13589)).toEqual({ peer: 13590, pids: [80, 81] });
    expect(sockets.get(502)).toEqual({ peer: 503, pids: [] });
    expect(sockets.size).toBe(4);
  });
});

describe('peerPid', () => {
  it('takes the claim only when the OS agrees, else the one holder, else nothing', () => {
    expect(peerPid({ socket: '1', pids: [10, 11] }, 11)).toBe(11);
    expect(peerPid({ socket: '1', pids: [10] }, 99)).toBe(10);
    expect(peerPid({ socket: '1', pids: [10, 11] }, 99)).toBeNull();
    expect(peerPid(null, 99)).toBeNull();
  });
});

const hasSs = process.platform === 'linux' && spawnSync('ss', ['-V']).status === 0;

describe.runIf(hasSs)('on a real socket', () => {
  it('names the process at the other end, whatever it claims, and only while it holds the socket', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'salus-peer-'));
    const path = join(dir, 's.sock');
    let client: ChildProcess | null = null;
    const server = createServer();
    const accepted = new Promise<Socket>((resolve) => server.on('connection', resolve));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    try {
      client = spawn(process.execPath, ['-e', `require('net').connect(${JSON.stringify(path)}); setInterval(() => {}, 1000)`], { stdio: 'ignore' });
      const socket = await accepted;
      const peer = await identifyPeer(socket, path);
      expect(peer?.pids).toEqual([client.pid]);
      expect(holdsSocket(client.pid!, peer!)).toBe(true);
      expect(peerPid(peer, process.pid)).toBe(client.pid);
      expect(verifiedPids(peer, 1)).toEqual([client.pid]);
      client.kill('SIGKILL');
      await new Promise((r) => client!.once('exit', r));
      expect(verifiedPids(peer, client.pid!)).toEqual([]); // gone: never signalled (its pid may be reused)
      socket.destroy();
    } finally {
      client?.kill('SIGKILL');
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
