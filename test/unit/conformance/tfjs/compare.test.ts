/**
 * The comparison behind `npm run test:tfjs-suite` and the TF.js slice test:
 * what counts as a regression (passed locally, not through the service), what
 * is excused (known locally flaky, with a reason), and how a run that died
 * half-way reads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareSuiteRuns, readSuiteRun, type SpecResult } from '../../../../conformance/tfjs/compare.js';

const dir = mkdtempSync(join(tmpdir(), 'salus-tfjs-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes the job's JSON lines for `specs` (with a summary line when `complete`) and reads them back. */
function run(specs: Array<Partial<SpecResult> & Pick<SpecResult, 'name' | 'status'>>, complete = true) {
  const path = join(dir, `run-${files++}.jsonl`);
  const lines = specs.map((spec) => JSON.stringify({ spec: { durationMs: 1, ...spec } }));
  if (complete) lines.push(JSON.stringify({ summary: { durationMs: 42 } }));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return readSuiteRun(path);
}

const FLAKY = 'time cpu webgpu {"WEBGPU_CPU_FORWARD":false} simple upload';

describe('comparing TF.js suite runs', () => {
  it('reads counts, completeness and the first failure message', () => {
    const local = run([{ name: 'a', status: 'passed' }, { name: 'b', status: 'failed', message: 'boom' }, { name: 'c', status: 'pending' }]);
    expect(local.counts).toEqual({ passed: 1, failed: 1, pending: 1 });
    expect(local.complete).toBe(true);
    expect(local.durationMs).toBe(42);
    expect(local.specs.get('b')?.message).toBe('boom');
  });

  it('calls a spec that passed locally and failed or went missing remotely a regression', () => {
    const local = run([{ name: 'a', status: 'passed' }, { name: 'b', status: 'passed' }, { name: 'c', status: 'failed' }]);
    const remote = run([{ name: 'a', status: 'failed', message: 'remote only' }, { name: 'c', status: 'passed' }], false);
    const comparison = compareSuiteRuns(local, remote);
    expect(remote.complete).toBe(false);
    expect(comparison.regressions.map((d) => [d.name, d.remote, d.remoteMessage])).toEqual([['a', 'failed', 'remote only'], ['b', 'missing', undefined]]);
    // Failing locally and passing remotely differs, but is no regression.
    expect(comparison.differing.map((d) => d.name)).toEqual(['a', 'b', 'c']);
  });

  it('reports a locally flaky spec with its reason instead of failing on it', () => {
    const comparison = compareSuiteRuns(run([{ name: FLAKY, status: 'passed' }]), run([{ name: FLAKY, status: 'failed' }]));
    expect(comparison.regressions).toEqual([]);
    expect(comparison.differing[0].flakyReason).toMatch(/above 0 ms/);
  });

  it('reads a missing file as an incomplete run with no specs', () => {
    const missing = readSuiteRun(join(dir, 'never-written.jsonl'));
    expect(missing).toMatchObject({ complete: false, counts: { passed: 0, failed: 0, pending: 0 } });
    expect(missing.specs.size).toBe(0);
  });
});
