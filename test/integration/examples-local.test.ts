/**
 * The example jobs in assets/jobs train on a local WebGPU device (SwiftShader
 * when there is no GPU), run as users run them: a child `node` process on the
 * built `salus run --local` entry (core/client/localRun.ts). Each must learn
 * (loss falls by more than half) and be deterministic (two runs print the same
 * numbers). Sizes are small so each run takes seconds on 2 CPU cores.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const entry = join(repoRoot, 'dist/core/client/localRun.js');
const sources = ['core/client/localRun.ts', 'core/platform/gpu.ts'].map((p) => join(repoRoot, p));
let runtimeDir = '';

interface JobRun {
  stdout: string;
  steps: { step: number; loss: number }[];
  final: { loss: number; checksum: number };
}

function runJob(job: string, args: string[], timeoutMs = 80_000): Promise<JobRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, join(repoRoot, job), '--', ...args], {
      cwd: repoRoot,
      env: { ...process.env, XDG_RUNTIME_DIR: runtimeDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`${job} exited with ${code ?? signal}\n${stderr}`));
      const lines = stdout.trim().split('\n').map((line) => JSON.parse(line));
      const final = lines.find((line) => 'final' in line)?.final;
      if (!final) return reject(new Error(`${job} printed no final line\n${stdout}\n${stderr}`));
      resolve({ stdout, steps: lines.filter((line) => 'step' in line), final });
    });
  });
}

beforeAll(() => {
  runtimeDir = mkdtempSync(join(tmpdir(), 'salus-xdg-'));
  // `npm test` builds first; build here only when the entry is missing or stale.
  const builtAt = existsSync(entry) ? statSync(entry).mtimeMs : 0;
  if (sources.some((p) => statSync(p).mtimeMs > builtAt)) {
    // tsc emits even when some other file fails to type-check; the type-check is its own step.
    const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: repoRoot, encoding: 'utf8' });
    if (!existsSync(entry)) throw new Error(`build produced no ${entry}\n${tsc.stdout}${tsc.stderr}`);
  }
}, 120_000);

afterAll(() => rmSync(runtimeDir, { recursive: true, force: true }));

describe.each([
  { job: 'assets/jobs/wgsl-train.js', args: ['--iterations', '200', '--batch', '64', '--log-every', '20'] },
  { job: 'assets/jobs/tfjs-train.js', args: ['--iterations', '60', '--batch', '64', '--log-every', '10'] },
])('$job on the local device', ({ job, args }) => {
  it('learns, and two runs print identical numbers', async () => {
    const first = await runJob(job, args);
    const second = await runJob(job, args);

    expect(first.steps[0].step).toBe(0);
    expect(first.final.loss).toBeLessThan(0.5 * first.steps[0].loss);
    expect(Number.isFinite(first.final.checksum)).toBe(true);
    expect(second.stdout).toBe(first.stdout);
  }, 180_000);
});
