/**
 * The bench's GPU-time instrument (bench/jobs/gpuTimes.js, timed.js `--gpu-times`), run as E5 runs it:
 * an unmodified example inside timed.js, on a local device and through the service. Each submit's
 * stamps must bracket its work (a larger model's submits take longer on the GPU), and an example that
 * destroys its device when done (wgsl-train.js does) must still have its last submits read. The wire
 * bench's call-path.js uses the same instrument for W2's submits of small dispatches.
 */
import { describe, expect, it } from 'vitest';
import { serviceForAllTests, type RunResult } from '../helpers/service.js';

const service = serviceForAllTests();

/** The `{"gpuSubmits"}` line of a run, and how many `{"step"}` lines it printed. */
function parse(run: RunResult): { submits: [number, number][]; steps: number } {
  expect(run.code, run.stderr + run.stdout).toBe(0);
  const lines = run.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
  const found = lines.find((json) => Array.isArray(json.gpuSubmits));
  expect(found, run.stdout.slice(-2000)).toBeDefined();
  return { submits: found.gpuSubmits, steps: lines.filter((json) => typeof json.step === 'number').length };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

async function wgsl(mode: 'local' | 'service', batch: number, hidden: number) {
  const args = ['run', 'bench/jobs/timed.js', ...(mode === 'local' ? ['--local'] : []), '--',
    '--gpu-times', 'assets/jobs/wgsl-train.js', '--iterations', '12', '--log-every', '1', '--batch', String(batch), '--hidden', String(hidden)];
  return parse(await service.cli(args, { timeoutMs: 120_000 }));
}

describe('timed.js --gpu-times', () => {
  for (const mode of ['local', 'service'] as const) {
    it(`times every submit on the GPU's clock, ${mode === 'local' ? 'on a local device' : 'through the service'}, up to the last before the device is destroyed`, async () => {
      const small = await wgsl(mode, 64, 32);
      const large = await wgsl(mode, 2048, 128);
      for (const run of [small, large]) {
        // wgsl-train.js submits at least once per step; every submit, the last ones included, is read.
        expect(run.steps).toBe(12);
        expect(run.submits.length).toBeGreaterThanOrEqual(12);
        for (const [t, us] of run.submits) {
          expect(t).toBeGreaterThan(1.6e12);
          expect(us).toBeGreaterThanOrEqual(0);
        }
      }
      // 2048×128 does about 128 times the arithmetic of 64×32: its submits' GPU time must show it.
      expect(median(large.submits.map(([, us]) => us))).toBeGreaterThan(4 * median(small.submits.map(([, us]) => us)));
    }, 240_000);
  }
});

describe('call-path.js --gpu-times 1', () => {
  it("reports the GPU time of each submit of small dispatches, and of those alone, through the service", async () => {
    const run = await service.cli(['run', 'bench/jobs/call-path.js', '--', '--pings', '0', '--dispatches', '200', '--submits', '4', '--gpu-times', '1'], { timeoutMs: 120_000 });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const events = run.stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const gpu = events.find((json) => json.ev === 'gpu');
    // The four dispatch submits, not the readback's submit that verifies the count after them.
    expect(gpu?.us).toHaveLength(4);
    for (const us of gpu.us) expect(us).toBeGreaterThan(0);
    expect(events.find((json) => json.ev === 'verified')?.count).toBe(800);
  }, 120_000);
});
