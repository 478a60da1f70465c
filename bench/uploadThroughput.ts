/**
 * Upload throughput of one large writeBuffer over the socket (issue 2, goal:
 * ≥500 MiB/s), with a local device as reference.
 *
 * bench/jobs/upload.js writes `mib` MiB in one `queue.writeBuffer` and awaits
 * `onSubmittedWorkDone()`, `repeats` times, then checks the bytes arrived. The
 * first repeat of each process is left out (first-touch allocation). Processes
 * alternate `salus run` and `salus run --local`, `rounds` of each.
 */
import { expectSuccess, startService, type SalusRun } from './harness.js';
import { type BenchResult } from './report.js';
import { round, rounded, summarize } from './stats.js';

export interface UploadOptions {
  mib: number;
  repeats: number;
  rounds: number;
}

export const UPLOAD_DEFAULTS: UploadOptions = { mib: 256, repeats: 5, rounds: 2 };

const MIB = 1024 * 1024;

/**
 * Per repeat from the `skip`-th on (default: all but the first): the whole upload, and the part until
 * writeBuffer returned (the job-side copy). Throws unless the job verified its bytes.
 */
export function uploadTimes(run: SalusRun, skip = 1): { ms: number[]; recordMs: number[] } {
  if (!run.events('verified').length) throw new Error('bench: upload job did not verify its bytes');
  const repeats = run.events('upload').slice(skip);
  return { ms: repeats.map((e) => e.ms as number), recordMs: repeats.map((e) => e.recordMs as number) };
}

/** MiB/s for `bytes` moved in `ms`. */
export function mibPerSecond(bytes: number, ms: number): number {
  return bytes / MIB / (ms / 1000);
}

/** Runs the upload job through a fresh service and locally, alternating. */
export async function benchUpload(options: UploadOptions = UPLOAD_DEFAULTS): Promise<BenchResult> {
  const service = await startService();
  try {
    const args = ['--mib', String(options.mib), '--repeats', String(options.repeats)];
    const salusMs: number[] = [];
    const localMs: number[] = [];
    const salusRecordMs: number[] = [];
    const localRecordMs: number[] = [];
    for (let k = 0; k < options.rounds; k++) {
      const s = uploadTimes(expectSuccess(await service.run('upload.js', args, ['--name', `upload-${k}`]).done, 'upload via salus'));
      const l = uploadTimes(expectSuccess(await service.runLocal('upload.js', args).done, 'upload --local'));
      salusMs.push(...s.ms);
      salusRecordMs.push(...s.recordMs);
      localMs.push(...l.ms);
      localRecordMs.push(...l.recordMs);
    }
    const bytes = options.mib * MIB;
    const salus = summarize(salusMs);
    const local = summarize(localMs);
    // Throughput at the median time, and at the p90 (slow-tail) time.
    const salusRate = { median: mibPerSecond(bytes, salus.median), p90: mibPerSecond(bytes, salus.p90) };
    const localRate = { median: mibPerSecond(bytes, local.median), p90: mibPerSecond(bytes, local.p90) };
    const rate = (r: { median: number; p90: number }) => `${r.median.toFixed(0)} / ${r.p90.toFixed(0)} MiB/s`;
    return {
      name: 'upload',
      method: `One ${options.mib} MiB writeBuffer then onSubmittedWorkDone, ${options.repeats} per process (first left out), ${options.rounds} processes per mode alternating; MiB/s at the median and at the p90 time.`,
      rows: [{
        metric: `${options.mib} MiB writeBuffer (median / p90)`, salus: rate(salusRate), reference: rate(localRate),
        ratio: (salusRate.median / localRate.median).toFixed(2), goal: '≥500 MiB/s', met: salusRate.median >= 500,
      }],
      data: {
        options,
        salusMs: rounded(salus),
        localMs: rounded(local),
        // Until writeBuffer returned: the client's copy (and any socket writes it did at once) vs Dawn's copy.
        recordMs: { salus: rounded(summarize(salusRecordMs)), local: rounded(summarize(localRecordMs)) },
        salusMiBps: { median: round(salusRate.median, 1), p90: round(salusRate.p90, 1) },
        localMiBps: { median: round(localRate.median, 1), p90: round(localRate.p90, 1) },
        samples: { salusMs: salusMs.map((v) => round(v, 1)), localMs: localMs.map((v) => round(v, 1)) },
      },
    };
  } finally {
    await service.stop();
  }
}
