/**
 * bench/traceRun.ts never hangs the bench (issue 10's E3: ORT servers that hit
 * out-of-memory hung, and the bench with them): a job of a trace that exits
 * non-zero fails the trace at once with its name and output, one that never
 * ends fails it at the deadline naming it, and either way no job process is left
 * running. Runs the compiled `salus` (npm run build first).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTrace, type TraceEntry } from '../../bench/traceRun.js';

const dir = mkdtempSync(join(tmpdir(), 'salus-trace-test-'));
const script = (name: string, body: string) => {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
};
const hang = script('hang.js', "console.log(JSON.stringify({ serving: true }));\nsetInterval(() => {}, 1000);\n");
const fail = script('fail.js', "console.log(JSON.stringify({ warm: true }));\nsetTimeout(() => { console.error('out of memory, giving up'); process.exit(3); }, 300);\n");
const ok = script('ok.js', "setTimeout(() => console.log(JSON.stringify({ done: true })), 200);\n");

const pids: number[] = [];
function entry(name: string, file: string, arrivalMs = 0): TraceEntry {
  return { name, arrivalMs, launch: (startFile) => ({ file: 'timed.js', jobArgs: ['--start-file', startFile, '--arrival-ms', String(arrivalMs), file], salusArgs: [] }) };
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runTrace', () => {
  it('fails at once, naming the job, when a job exits non-zero', async () => {
    const started = Date.now();
    const error = await runTrace([entry('t-ok', ok), entry('t-fail', fail, 100), entry('t-hang', hang, 200)], { serveArgs: [], timeoutMs: 60_000 })
      .then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toContain('t-fail exited with 3');
    expect(error?.message).toContain('out of memory, giving up');
    // Well before the deadline: the hanging job did not hold the trace.
    expect(Date.now() - started).toBeLessThan(45_000);
  }, 90_000);

  it('fails at its deadline, naming the job that did not finish, and stops it', async () => {
    const trace = [entry('t-ok', ok), entry('t-hang', hang, 100)];
    const error = await runTrace(trace, { serveArgs: [], timeoutMs: 3000 }).then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/ran past its 3 s limit; 1 job\(s\) had not finished/);
    expect(error?.message).toContain('t-hang');
    expect(error?.message).toContain('"serving":true');
    // Nothing of the trace still runs: no node process has the hanging script on its command line.
    const { execFileSync } = await import('node:child_process');
    const left = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n').filter((line) => line.includes(hang));
    pids.push(...left.map((line) => Number(line.trim().split(/\s+/)[0])));
    expect(pids.filter(alive)).toEqual([]);
  }, 90_000);
});
