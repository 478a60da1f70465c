/**
 * Strangers on the socket and careless flags: a connection that has not said
 * hello cannot make the service allocate what a length prefix declares, and
 * `--socket` never removes a user's file or changes the mode of a user's folder.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SALUS_BIN, startServicePerTest, type TestService } from '../helpers/service.js';
import { rawSocket as raw, sendFrame as send, until } from '../helpers/rawSocket.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

let service: TestService | null = null;
const scratch = mkdtempSync(join(tmpdir(), 'salus-untrusted-'));
const startService = startServicePerTest();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `salus serve` with `args` until it exits or says it listens (then stops it). */
function serve(args: string[], cwd: string): Promise<{ code: number | null; stderr: string; listened: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SALUS_BIN, 'serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let listened = false;
    const onData = (d: Buffer) => {
      output += d.toString();
      if (!listened && /listening on/.test(output)) {
        listened = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (code) => resolve({ code, stderr: output, listened }));
  });
}

describe('a stranger before hello', () => {
  it('may not declare a large frame: told why and dropped, and the service serves on', async () => {
    service = await startService();
    const strangers = await Promise.all(Array.from({ length: 8 }, () => raw(service!.socketPath)));
    for (const { socket } of strangers) {
      const prefix = Buffer.alloc(8);
      prefix.writeUInt32LE(256 * 1024 * 1024, 0);
      prefix.writeUInt32LE(16, 4);
      socket.write(prefix);
      socket.write(Buffer.alloc(4096, 1));
    }
    for (const stranger of strangers) {
      await stranger.closed;
      expect(stranger.frames[0]).toMatchObject({ t: 'error' });
      expect(stranger.frames[0].message).toMatch(/exceeds the 65536-byte limit/);
    }
    // A hello of the ordinary size is still welcome.
    const friend = await raw(service.socketPath);
    send(friend.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'control' });
    await until(() => friend.frames.find((f) => f.t === 'welcome'), 'a welcome');
    friend.socket.destroy();
  });
});

describe('--socket', () => {
  it("refuses a path that is a user's file, and leaves the file", async () => {
    const dir = join(scratch, 'file');
    mkdirSync(dir);
    writeFileSync(join(dir, 'notes.txt'), 'my notes');
    const result = await serve(['--socket', 'notes.txt'], dir);
    expect(result.listened).toBe(false);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/notes\.txt exists and is not a socket/);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('my notes');
  });

  it("keeps the mode of the user's folder, and makes a missing one private", async () => {
    const dir = join(scratch, 'work');
    mkdirSync(dir, { mode: 0o755 });
    const before = statSync(dir).mode & 0o777;
    const inPlace = await serve(['--socket', 's.sock'], dir);
    expect(inPlace.listened, inPlace.stderr).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(before);

    const fresh = await serve(['--socket', join(dir, 'new', 'salus.sock')], dir);
    expect(fresh.listened, fresh.stderr).toBe(true);
    expect(statSync(join(dir, 'new')).mode & 0o777).toBe(0o700);
  });
});
