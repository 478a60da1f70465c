// The CTS runner's command line, compiled (dist/conformance/cts/run.js): help, a
// wrong option and a missing CTS each say what to do, without a stack trace.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/service.js';

const RUN = join(ROOT, 'dist', 'conformance', 'cts', 'run.js');
const run = (args: string[]) => spawnSync(process.execPath, [RUN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });

describe('npm run test:cts', () => {
  it('--help prints the usage and how to get the CTS, and exits 0', () => {
    const result = run(['--help']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Usage: npm run test:cts -- --cts DIR/);
    expect(result.stdout).toMatch(/git clone https:\/\/github.com\/gpuweb\/cts.git/);
  });

  it('an unknown option is named with the usage, exit 2, no stack trace', () => {
    const result = run(['--bogus']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/salus: Unknown option '--bogus'/);
    expect(result.stderr).toMatch(/Usage:/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('without --cts it says where to get one', () => {
    const result = run([]);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/say where the CTS is: --cts DIR/);
  });
});
