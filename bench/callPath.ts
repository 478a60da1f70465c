/**
 * The call path, in isolation: what one await and one small call cost through
 * the service vs on a local device.
 *
 * bench/jobs/call-path.js times `pings` empty `onSubmittedWorkDone()` awaits (a
 * round trip through the socket, the session queue and Dawn) and `submits`
 * passes of `dispatches` one-workgroup dispatches each (setBindGroup +
 * dispatchWorkgroups: recorded, batched, framed, validated and replayed), and
 * checks by readback that every dispatch ran. The first 10 pings and the first
 * submit of each process are left out. Processes alternate, `rounds` per mode.
 */
import { expectSuccess, startService, type SalusRun } from './harness.js';
import { medianP90, ms, type BenchResult } from './report.js';
import { round, rounded, summarize } from './stats.js';

export interface CallPathOptions {
  pings: number;
  dispatches: number;
  submits: number;
  rounds: number;
}

export const CALL_PATH_DEFAULTS: CallPathOptions = { pings: 200, dispatches: 10_000, submits: 4, rounds: 2 };

/** What one call-path job measured, its warm-up left out. */
export interface CallPathSamples {
  /** Each awaited empty round trip, in ms (none when the job ran no pings). */
  pingMs: number[];
  /** Per dispatch, in ms: each submit's time over its dispatch count. */
  dispatchMs: number[];
}

/** Round trips after the first 10 of a process (connection, JIT) count; so do those of bench/jobs/socket-ping.js. */
export function pingSamples(run: SalusRun): number[] {
  const [ping] = run.events('ping');
  return ping ? (ping.ms as number[]).slice(10) : [];
}

/** The samples of a finished call-path job (its first submit left out); throws unless its dispatch count verified. */
export function callPathSamples(run: SalusRun): CallPathSamples {
  if (!run.events('verified').length) throw new Error('bench: call-path job did not verify its dispatch count');
  return {
    pingMs: pingSamples(run),
    dispatchMs: run.events('dispatch').slice(1).map((e) => e.ms / e.count),
  };
}

/** Runs the call-path job through a fresh service and locally, alternating. */
export async function benchCallPath(options: CallPathOptions = CALL_PATH_DEFAULTS): Promise<BenchResult> {
  const service = await startService();
  try {
    const args = ['--pings', String(options.pings), '--dispatches', String(options.dispatches), '--submits', String(options.submits)];
    const salus: CallPathSamples = { pingMs: [], dispatchMs: [] };
    const local: CallPathSamples = { pingMs: [], dispatchMs: [] };
    for (let k = 0; k < options.rounds; k++) {
      const s = callPathSamples(expectSuccess(await service.run('call-path.js', args, ['--name', `call-path-${k}`]).done, 'call-path via salus'));
      const l = callPathSamples(expectSuccess(await service.runLocal('call-path.js', args).done, 'call-path --local'));
      salus.pingMs.push(...s.pingMs);
      salus.dispatchMs.push(...s.dispatchMs);
      local.pingMs.push(...l.pingMs);
      local.dispatchMs.push(...l.dispatchMs);
    }
    const ping = { salus: summarize(salus.pingMs), local: summarize(local.pingMs) };
    const dispatch = { salus: summarize(salus.dispatchMs), local: summarize(local.dispatchMs) };
    return {
      name: 'call path',
      method: `Empty onSubmittedWorkDone round trips (${options.pings} per process) and ${options.dispatches} one-workgroup dispatches per submit (${options.submits} per process), ${options.rounds} processes per mode alternating.`,
      rows: [
        {
          metric: 'empty await round trip (median / p90)', salus: medianP90(ping.salus), reference: medianP90(ping.local),
          ratio: `${(ping.salus.median / ping.local.median).toFixed(1)}x`, goal: '', met: null,
        },
        {
          metric: `per dispatch, ${options.dispatches}/submit (median / p90)`,
          salus: `${ms(dispatch.salus.median)} / ${ms(dispatch.salus.p90)}`,
          reference: `${ms(dispatch.local.median)} / ${ms(dispatch.local.p90)}`,
          ratio: `${(dispatch.salus.median / dispatch.local.median).toFixed(2)}x`, goal: '', met: null,
        },
      ],
      data: {
        options,
        pingMs: { salus: rounded(ping.salus), local: rounded(ping.local) },
        dispatchUs: {
          salus: rounded(scale(dispatch.salus, 1000)),
          local: rounded(scale(dispatch.local, 1000)),
          ratio: round(dispatch.salus.median / dispatch.local.median),
        },
      },
    };
  } finally {
    await service.stop();
  }
}

function scale(summary: ReturnType<typeof summarize>, factor: number) {
  return { ...summary, median: summary.median * factor, p90: summary.p90 * factor, min: summary.min * factor, max: summary.max * factor };
}
