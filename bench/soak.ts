/**
 * `npm run soak`: the service under churn. For a bounded time, jobs start,
 * finish, are killed (`salus kill`), are SIGKILLed from outside, are paused and
 * resumed, and the policy changes, all at random (seeded). Then it checks that
 * nothing leaked: the ledger holds zero bytes and no lanes, the service's file
 * descriptors are back where they started, and its memory stayed flat. Reports
 * jobs run, peak concurrent jobs and iterations per second held; writes JSON to
 * bench/results/<timestamp>.json; exits 1 if a check fails.
 *
 * Usage: `node dist/bench/soak.js [--minutes 10] [--max-jobs 6] [--seed 1] [--memory 256MiB]`
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineFacts, ROOT, startService, type BenchService, type SalusProcess } from './harness.js';
import { seededRandom } from './random.js';
import { resultsDir, writeResults } from './report.js';
import type { JobInfo, MemoryMap } from '../core/protocol/state.js';
import { POLICY_NAMES } from '../core/protocol/state.js';

const STEPS_JOB = join(ROOT, 'test', 'fixtures', 'jobs', 'steps.js');
const KiB = 1024;
/** How often resources are sampled. */
const SAMPLE_MS = 1000;
/** The service's resident memory may grow this much from the first drain to the second and still count as flat. */
const RSS_GROWTH_LIMIT = 1.25;

interface Sample {
  atMs: number;
  rssBytes: number;
  fds: number;
  usedBytes: number;
  liveJobs: number;
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * KiB : 0;
}

const fdCount = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

/** What each of the process's descriptors points at (`socket:[…]`, a path, `anon_inode:…`), without the inode numbers. */
function fdTargets(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`).replace(/\[\d+\]$/, '')];
    } catch {
      return [];
    }
  }).sort();
}

/** One soak: churn for `durationMs`, then drain and check. */
async function soak(options: { durationMs: number; maxJobs: number; seed: number; memory: string }) {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  const service: BenchService = await startService(['--memory', options.memory, '--policy', 'FAIR']);
  const pid = service.pid!;
  const live = new Map<SalusProcess, { name: string }>();
  const ended: Array<{ code: number | null }> = [];
  const samples: Sample[] = [];
  const actions: Record<string, number> = { start: 0, kill: 0, sigkill: 0, pause: 0, policy: 0 };
  let started = 0;
  let peakJobs = 0;
  const startedAtMs = Date.now();
  const fdsAtStart = fdCount(pid);

  const sample = async () => {
    const memory = await service.call<MemoryMap>('memory');
    samples.push({ atMs: Date.now() - startedAtMs, rssBytes: rssBytes(pid), fds: fdCount(pid), usedBytes: memory.usedBytes, liveJobs: live.size });
  };
  /** One random action: mostly starting jobs, sometimes ending, pausing or re-policing them. */
  const act = async () => {
    const roll = random();
    if (roll < 0.6) {
      if (live.size >= options.maxJobs) return;
      const name = `soak-${++started}`;
      const args = ['--iterations', String(between(5, 80)), '--work', String(between(4, 32)),
        '--persistent', String(between(16, 4096) * KiB), '--ephemeral', String(between(16, 4096) * KiB)];
      if (random() < 0.5) args.push('--sdk');
      const job = service.run(STEPS_JOB, args, ['--name', name, '--priority', String(between(0, 3))]);
      live.set(job, { name });
      actions.start++;
      void job.done.then((run) => { live.delete(job); ended.push({ code: run.code }); });
      peakJobs = Math.max(peakJobs, live.size);
    } else if (roll < 0.66) {
      const victim = pick(await runningJobs());
      if (!victim) return;
      await service.call('killJob', victim.id).catch(() => undefined); // it may have ended meanwhile
      actions.kill++;
    } else if (roll < 0.7) {
      const victim = pick([...live.keys()]);
      if (!victim?.pid) return;
      try {
        process.kill(victim.pid, 'SIGKILL');
        actions.sigkill++;
      } catch {
        // Already gone.
      }
    } else if (roll < 0.76) {
      const job = pick(await runningJobs());
      if (job?.state !== 'running') return;
      await service.call('pauseJob', job.id).catch(() => undefined);
      setTimeout(() => void service.call('resumeJob', job.id).catch(() => undefined), between(100, 600));
      actions.pause++;
    } else if (roll < 0.78) {
      await service.call('setPolicy', pick(POLICY_NAMES));
      actions.policy++;
    }
  };
  const runningJobs = async () => (await service.call<JobInfo[]>('jobs')).filter((job) => job.state === 'running' || job.state === 'paused');

  /** Churns until `untilMs`, then lets every job end by itself and returns what the service holds then. */
  const churnThenDrain = async (untilMs: number) => {
    let nextSampleMs = Date.now();
    while (Date.now() < untilMs) {
      if (Date.now() >= nextSampleMs) {
        await sample();
        nextSampleMs += SAMPLE_MS;
      }
      await act();
      await new Promise((resolve) => setTimeout(resolve, between(50, 400)));
    }
    const drainDeadlineMs = Date.now() + 120_000;
    while (live.size > 0 && Date.now() < drainDeadlineMs) {
      for (const job of await runningJobs()) if (job.state === 'paused') await service.call('resumeJob', job.id).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Closed jobs settle (exit reports arrive within the service's grace period).
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await sample();
    const memory = await service.call<MemoryMap>('memory');
    return {
      liveJobs: live.size,
      usedBytes: memory.usedBytes, lanes: memory.lanes.length, jobsHoldingMemory: memory.jobs.length,
      fds: fdCount(pid), fdTargets: fdTargets(pid), rssBytes: rssBytes(pid),
    };
  };

  // Two halves, each drained: a leak grows with churn, so the second drain holds no more than the first.
  // (The first half also opens what the service opens once and keeps: caches, thread pools.)
  const mid = await churnThenDrain(startedAtMs + options.durationMs / 2);
  const end = await churnThenDrain(startedAtMs + options.durationMs);
  const jobs = await service.call<JobInfo[]>('jobs');
  const iterations = jobs.reduce((sum, job) => sum + job.iterations.done, 0);
  const elapsedMs = Date.now() - startedAtMs;
  await service.stop();

  const states = Object.fromEntries(['done', 'failed', 'killed'].map((state) => [state, jobs.filter((j) => j.state === state).length]));
  const drained = (at: typeof mid) => at.liveJobs === 0 && at.usedBytes === 0 && at.lanes === 0 && at.jobsHoldingMemory === 0;
  const checks = {
    allJobsEnded: mid.liveJobs === 0 && end.liveJobs === 0,
    ledgerEmpty: drained(mid) && drained(end),
    fdsFlat: end.fds <= mid.fds,
    memoryFlat: end.rssBytes <= mid.rssBytes * RSS_GROWTH_LIMIT,
  };
  const extraFds = [...end.fdTargets];
  for (const target of mid.fdTargets) {
    const at = extraFds.indexOf(target);
    if (at >= 0) extraFds.splice(at, 1);
  }
  return {
    id: 'soak',
    options,
    jobsRun: started,
    jobsEnded: ended.length,
    states,
    actions,
    peakConcurrentJobs: peakJobs,
    iterations,
    iterationsPerSecond: Number((iterations / (elapsedMs / 1000)).toFixed(1)),
    fds: { atStart: fdsAtStart, afterFirstHalf: mid.fds, atEnd: end.fds, peak: Math.max(...samples.map((s) => s.fds)), newAtEnd: extraFds },
    rssMiB: { afterFirstHalf: +(mid.rssBytes / 2 ** 20).toFixed(1), atEnd: +(end.rssBytes / 2 ** 20).toFixed(1), peak: +(Math.max(...samples.map((s) => s.rssBytes)) / 2 ** 20).toFixed(1) },
    final: { usedBytes: end.usedBytes, lanes: end.lanes, jobs: end.jobsHoldingMemory },
    checks,
    passed: Object.values(checks).every(Boolean),
    samples,
  };
}
async function main(): Promise<number> {
  const usage = 'usage: node dist/bench/soak.js [--minutes 10] [--max-jobs 6] [--seed 1] [--memory 256MiB]';
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        minutes: { type: 'string', default: '10' }, 'max-jobs': { type: 'string', default: '6' }, seed: { type: 'string', default: '1' },
        memory: { type: 'string', default: '256MiB' }, help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    process.stderr.write(`soak: ${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const startedAt = new Date();
  const minutes = Number(values.minutes);
  if (!(minutes > 0)) throw new Error(`soak: --minutes must be a positive number, got '${values.minutes}'`);
  const result = await soak({ durationMs: minutes * 60_000, maxJobs: Number(values['max-jobs']), seed: Number(values.seed), memory: values.memory! });
  process.stdout.write(`${JSON.stringify({ ...result, samples: `${result.samples.length} samples` }, null, 2)}\n`);
  const file = writeResults(resultsDir(ROOT), { kind: 'soak', machine: machineFacts(), result }, startedAt);
  process.stdout.write(`soak: ${result.passed ? 'passed' : 'FAILED'}; ${result.jobsRun} jobs, peak ${result.peakConcurrentJobs} at once, `
    + `${result.iterationsPerSecond} iterations/s; written to ${file}\n`);
  return result.passed ? 0 : 1;
}

main().then((code) => process.exit(code), (error: Error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  process.exit(1);
});
