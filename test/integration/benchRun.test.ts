/**
 * `npm run bench`, the one entry (bench/run.ts), through the compiled bench as
 * users run it: a real benchmark (upload, the cheapest: one service, a few
 * 256 MiB writes) writes its rows and environment to the run's JSON and prints
 * them; an unknown benchmark is refused, naming the choices, before any service
 * starts. (`--gpu`: benchGpu.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/service.js';

const RUN = join(ROOT, 'dist', 'bench', 'run.js');
const dir = mkdtempSync(join(tmpdir(), 'salus-bench-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run bench', () => {
  it('runs the benchmarks --only names and writes their rows, the environment and no failure to --results', () => {
    const run = spawnSync(process.execPath, [RUN, '--only', 'upload', '--results', join(dir, 'results')], {
      cwd: ROOT, encoding: 'utf8', timeout: 240_000, env: { ...process.env, XDG_RUNTIME_DIR: dir },
    });
    expect(run.status, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/^bench: .+, \d+ CPUs, Node v\d+/);
    expect(run.stdout).toMatch(/^upload {2,}256 MiB writeBuffer/m);
    const files = readdirSync(join(dir, 'results'));
    expect(files).toHaveLength(1);
    const written = JSON.parse(readFileSync(join(dir, 'results', files[0]), 'utf8'));
    expect(written.failures).toEqual([]);
    expect(written.environment).toMatchObject({ cpuCount: expect.any(Number), backend: expect.any(String) });
    expect(written.results).toHaveLength(1);
    expect(written.results[0]).toMatchObject({ name: 'upload', rows: [{ metric: expect.stringMatching(/writeBuffer/), salus: expect.stringMatching(/MiB\/s/) }] });
  }, 300_000);

  it('refuses an unknown benchmark, naming every choice', () => {
    const run = spawnSync(process.execPath, [RUN, '--only', 'upload,paper'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('bench: unknown benchmark paper; choose from jct, sweep, sweep-gpus, inference, s1, switch, overhead, iteration, upload, call-path, paging, wire\n');
  });
});
