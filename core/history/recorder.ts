/**
 * Feeds the history store from the service's own events: a job's row when it
 * opens, a state change when the (coalesced) job table shows one, a progress
 * checkpoint every CHECKPOINT_INTERVAL_MS, and its final record — JobInfo,
 * iteration series, output tail — synchronously when it finishes, so a finished
 * job is on disk before the service does anything else. A failing write is
 * logged and never reaches the service.
 */
import type { ServiceEvent } from '../protocol/api.js';
import { HISTORY_SERIES_MAX_POINTS, type HistoryEntry, type HistoryFilter, type IterationSample, type JobSpec } from '../protocol/history.js';
import { FINAL_STATES, type JobInfo, type JobState } from '../protocol/state.js';
import type { LaunchRequest } from '../protocol/calls.js';
import { toJobInfo, type JobRecord } from '../service/jobRecord.js';
import type { LaunchCaller, LaunchObserver } from '../service/launcher.js';
import type { SalusService } from '../service/service.js';
import type { MeasuredProfile, ServiceHistory } from '../service/serviceHistory.js';
import type { HistoryStore } from './store.js';

/** How often running jobs' progress is written. */
const CHECKPOINT_INTERVAL_MS = 5000;
/** First spacing of a job's iteration samples; doubles each time the series is thinned. */
const FIRST_SAMPLE_INTERVAL_MS = 1000;
/** Characters of a job's output kept in its record. */
export const OUTPUT_TAIL_CHARS = 64 * 1024;

interface Tracked {
  state: JobState;
  series: IterationSample[];
  sampleIntervalMs: number;
  outputChanged: boolean;
  launchId: number | null;
}

/** The job number of a `job-N` id. */
function jobNumber(id: string): number {
  return Number(/^job-(\d+)$/.exec(id)?.[1] ?? 0);
}

/** Adds a sample, thinning the series to every other point when it is full. */
export function addSample(track: Pick<Tracked, 'series' | 'sampleIntervalMs'>, sample: IterationSample, force = false): void {
  const last = track.series.at(-1);
  if (last && !force && (sample.at - last.at < track.sampleIntervalMs || sample.itersDone === last.itersDone)) return;
  if (last && last.itersDone === sample.itersDone && last.attainedMs === sample.attainedMs) return;
  track.series.push(sample);
  if (track.series.length > HISTORY_SERIES_MAX_POINTS) {
    track.series = track.series.filter((_, i) => i % 2 === 0 || i === track.series.length - 1);
    track.sampleIntervalMs *= 2;
  }
}

export class HistoryRecorder implements ServiceHistory {
  private readonly tracked = new Map<string, Tracked>();
  /** This run's ended jobs, newest last, whose late output is still recorded. */
  private readonly finishedIds = new Set<string>();
  private service: SalusService | null = null;
  private lastCheckpointAt = 0;
  private finishedSincePrune = 0;
  /** Set around a relaunch, read by the launch observer that `launch` calls at once. */
  private relaunchAttempt: number | null = null;

  constructor(
    private readonly store: HistoryStore,
    private readonly serviceKey: string,
    readonly runId: number,
    readonly earlierJobs: JobInfo[],
    readonly firstJobNumber: number,
    private readonly log: (line: string) => void,
  ) {}

  output(id: string): string | null {
    return this.guard('read an output', () => this.store.output(this.serviceKey, id)) ?? null;
  }

  measuredProfile(file: string, args: readonly string[]): MeasuredProfile | null {
    return this.guard('read a measured profile', () => this.store.measuredProfile(file, args)) ?? null;
  }

  list(filter: HistoryFilter): HistoryEntry[] {
    const entries = this.store.list(filter, this.serviceKey, this.runId);
    const live = new Map((this.service?.jobInfos() ?? []).filter((job) => !job.fromEarlierRun).map((job) => [job.id, job]));
    return entries.map((entry) => {
      const now = entry.runId === this.runId ? live.get(entry.id) : undefined;
      return now ? { ...entry, ...now, runId: entry.runId, fromEarlierRun: false } : entry;
    });
  }

  /** Starts recording the service's jobs. */
  attach(service: SalusService): void {
    this.service = service;
    service.onDidOpenJob((job) => this.guard(`record ${job.id}`, () => this.opened(job)));
    service.onDidFinishJob((job) => this.guard(`record the end of ${job.id}`, () => this.finished(job)));
    service.onDidPublish((event: ServiceEvent) => {
      if (event.type === 'jobs') this.guard('record job states', () => this.observe(event.jobs));
      if (event.type === 'output') this.guard(`record ${event.jobId}'s output`, () => this.outputArrived(event.jobId));
    });
  }

  /** The launcher's observer: keeps each launch request until its job starts. */
  readonly launches: LaunchObserver = {
    requested: (request: LaunchRequest, caller: LaunchCaller) => {
      const attempt = this.relaunchAttempt ?? 1;
      this.relaunchAttempt = null;
      const launchId = this.guard('record a launch', () => this.store.addLaunch(this.runId, request, caller, attempt)) ?? null;
      return {
        connected: (jobId: string) => this.guard(`record ${jobId}'s launch`, () => {
          if (launchId === null) return;
          this.store.linkLaunch(launchId, jobId);
          const track = this.tracked.get(jobId);
          if (!track) return;
          track.launchId = launchId;
          const job = this.service?.jobInfos().find((info) => info.id === jobId && !info.fromEarlierRun);
          const spec: JobSpec = {
            name: job?.name ?? request.name ?? jobId, file: request.file, args: request.args ?? [],
            hints: request.hints ?? {}, priority: job?.priority ?? request.hints?.priority ?? 0,
          };
          this.store.updateSpec(this.runId, jobId, spec);
        }),
        failed: () => this.guard('record a failed launch', () => { if (launchId !== null) this.store.settleLaunch(launchId, 'failed'); }),
      };
    },
  };

  /**
   * Starts again, through `launch`, the launch requests of earlier runs whose
   * jobs never started (they waited in the queue when the service stopped), up
   * to `maxAttempts` tries each. Each earlier job's error says what became of it.
   */
  relaunchWaiting(launch: (request: LaunchRequest, caller: LaunchCaller) => Promise<{ jobId: string }>, maxAttempts = 3): void {
    const waiting = this.guard('read waiting launches', () => this.store.waitingLaunches(this.serviceKey, this.runId)) ?? [];
    for (const row of waiting) {
      this.guard('settle a launch', () => this.store.settleLaunch(row.launchId, 'relaunched'));
      const earlier = row.jobId ? this.earlierJobs.find((job) => job.id === row.jobId && job.runId === row.runId) : undefined;
      const note = (text: string) => {
        this.log(`salus: ${row.jobId ?? `a launch of ${row.request.file}`} ${text}`);
        if (!row.jobId) return;
        const error = this.guard('note a relaunch', () => this.store.appendError(row.runId, row.jobId!, text));
        if (earlier && error) earlier.error = error;
        this.service?.markDirty('jobs');
      };
      if (row.attempt >= maxAttempts) {
        note(`was not started again: ${row.attempt} tries were cut short by the service stopping`);
        continue;
      }
      this.relaunchAttempt = row.attempt + 1;
      launch(row.request, row.caller).then(
        ({ jobId }) => note(`was started again as ${jobId}`),
        (error: Error) => note(`could not be started again: ${error.message}`),
      );
      this.relaunchAttempt = null;
    }
  }

  /** Marks the run stopped cleanly and closes the file. */
  close(): void {
    this.guard('close the history', () => {
      this.checkpoint(Date.now());
      this.store.endRun(this.runId);
      this.store.close();
    });
  }

  private opened(job: JobRecord): void {
    const info = toJobInfo(job, null);
    const spec: JobSpec = { name: job.name, file: job.file, args: job.args, hints: job.hints, priority: job.priority };
    this.tracked.set(job.id, { state: info.state, series: [], sampleIntervalMs: FIRST_SAMPLE_INTERVAL_MS, outputChanged: false, launchId: null });
    this.store.insertJob(this.runId, jobNumber(job.id), info, spec);
  }

  private observe(jobs: JobInfo[]): void {
    const now = Date.now();
    for (const info of jobs) {
      const track = this.tracked.get(info.id);
      if (!track || info.fromEarlierRun || FINAL_STATES.includes(track.state)) continue;
      if (info.state === 'running' || info.state === 'paused') {
        addSample(track, { at: now, itersDone: info.iterations.done, attainedMs: info.attainedMs });
      }
      if (info.state === track.state || FINAL_STATES.includes(info.state)) continue;
      // Admission has its own time; pause and resume are seen within the table's coalescing interval.
      const at = track.state === 'queued' && info.state === 'running' ? info.startedAt ?? now : now;
      track.state = info.state;
      this.store.updateJob(this.runId, info, { changes: [{ at, state: info.state, message: null }] });
      if (info.startedAt !== null && track.launchId !== null) this.store.settleLaunch(track.launchId, 'started');
    }
    if (now - this.lastCheckpointAt >= CHECKPOINT_INTERVAL_MS) this.checkpoint(now, jobs);
  }

  /** Writes running jobs' progress, so a job lost with the service shows how far it got. */
  private checkpoint(now: number, jobs = this.service?.jobInfos() ?? []): void {
    this.lastCheckpointAt = now;
    this.store.batch(() => {
      for (const info of jobs) {
        const track = this.tracked.get(info.id);
        if (!track || info.fromEarlierRun || FINAL_STATES.includes(track.state) || FINAL_STATES.includes(info.state)) continue;
        const output = track.outputChanged ? this.service?.jobOutput(info.id).slice(-OUTPUT_TAIL_CHARS) : undefined;
        track.outputChanged = false;
        this.store.updateJob(this.runId, info, { series: track.series, output });
      }
      this.store.touchRun(this.runId, now);
    });
  }

  /**
   * A running job's output is written with its checkpoints; output relayed after
   * its end (`salus run` forwards the last lines after the exit) goes in at once.
   */
  private outputArrived(id: string): void {
    const track = this.tracked.get(id);
    if (track) track.outputChanged = true;
    else if (this.service && this.finishedIds.has(id)) this.store.setOutput(this.runId, id, this.service.jobOutput(id).slice(-OUTPUT_TAIL_CHARS));
  }

  private finished(job: JobRecord): void {
    const info = toJobInfo(job, null);
    const track = this.tracked.get(job.id);
    if (!track) return;
    const endedAt = info.finishedAt ?? Date.now();
    // A job that ran between two looks at the table still ran.
    const ran = track.state === 'queued' && info.startedAt !== null ? [{ at: info.startedAt, state: 'running' as const, message: null }] : [];
    track.state = info.state;
    addSample(track, { at: endedAt, itersDone: info.iterations.done, attainedMs: info.attainedMs }, true);
    this.store.updateJob(this.runId, info, {
      series: track.series,
      output: job.output.slice(-OUTPUT_TAIL_CHARS),
      changes: [...ran, { at: endedAt, state: info.state, message: info.error }],
    });
    if (track.launchId !== null) this.store.settleLaunch(track.launchId, job.startedAt === null ? 'ended' : 'started');
    this.tracked.delete(job.id);
    this.finishedIds.add(job.id);
    // Bounded: output comes late only for jobs that just ended.
    if (this.finishedIds.size > 1000) this.finishedIds.delete(this.finishedIds.values().next().value!);
    if (++this.finishedSincePrune >= 100) {
      this.finishedSincePrune = 0;
      this.store.prune();
    }
  }

  private guard<T>(what: string, write: () => T): T | undefined {
    try {
      return write();
    } catch (error) {
      this.log(`salus: history: could not ${what}: ${(error as Error).message}`);
      return undefined;
    }
  }
}
