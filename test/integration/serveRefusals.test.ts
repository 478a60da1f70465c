/**
 * `salus serve` refuses to start, exits non-zero and says what to do in the
 * user's words (issue 9, "small things a user trips on"): another service on
 * its socket, an unknown policy, a panel address it cannot use. A bad
 * address is caught before the GPU is opened.
 */
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServicePerTest, type TestService } from '../helpers/service.js';

let service: TestService | null = null;
let squatter: Server | null = null;
const startService = startServicePerTest();
afterEach(async () => {
  squatter?.close();
  squatter = null;
});

describe('salus serve refuses to start', () => {
  it('when a service already listens at its socket', async () => {
    service = await startService(['--memory', '64MiB']);
    const second = await service.cli(['serve', '--data-dir', join(service.dir, 'other-data')], { timeoutMs: 30_000 });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`salus: a service is already listening at ${service.socketPath}. Stop it first, or pass --socket PATH.`);
    expect((await service.json<any[]>(['jobs']))).toEqual([]); // the first one serves on
  }, 60_000);

  it('with an unknown policy, or a panel port past 65535, before it opens the GPU', async () => {
    service = await startService(['--memory', '64MiB']);
    const elsewhere = ['--socket', join(service.dir, 'other.sock'), '--data-dir', join(service.dir, 'other-data')];
    const policy = await service.cli(['serve', ...elsewhere, '--policy', 'BOGUS']);
    expect(policy.code).toBe(1);
    expect(policy.stderr.trim()).toBe("salus: unknown policy 'BOGUS'; choose one of FIFO, SRTF, PACK, FAIR, PRIORITY");
    const port = await service.cli(['serve', ...elsewhere, '--http', '99999']);
    expect(port.code).toBe(1);
    expect(port.stderr.trim()).toBe('salus: --http port 99999 is past 65535; pick a port from 1 to 65535 (0: any free one)');
    expect(port.stdout).not.toContain('listening on');
  }, 60_000);

  it('when its panel\'s port is taken, saying so', async () => {
    service = await startService(['--memory', '64MiB']);
    squatter = createServer();
    await new Promise<void>((resolve) => squatter!.listen(0, '127.0.0.1', resolve));
    const { port } = squatter.address() as { port: number };
    const run = await service.cli(['serve', '--socket', join(service.dir, 'other.sock'), '--data-dir', join(service.dir, 'other-data'), '--http', String(port)], { timeoutMs: 30_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`salus: 127.0.0.1:${port} is already in use (another salus serve --http, or another program); pass --http with another port`);
    expect(run.stdout).not.toContain('panel at');
  }, 60_000);
});
