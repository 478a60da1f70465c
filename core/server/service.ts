/**
 * The Salus service: one shared device, the memory manager, the scheduler, and
 * the jobs. Socket connections hand it job messages and control calls; it
 * admits jobs (they wait `queued` until their memory fits), gives each admitted
 * job a session that replays its GPU work one granted iteration at a time, and
 * publishes its state as events. Nothing a job sends can take it down: every
 * failure stays with that job.
 */
import { EventEmitter } from 'node:events';
import { createMemoryManager, type MemoryManager } from '../memory/memoryManager.js';
import { deviceAllocator } from '../memory/allocator.js';
import { formatBytes } from '../memory/size.js';
import { createScheduler, withAttainedFractions, type Scheduler } from '../scheduler/index.js';
import { describeHung, watchIterations, type HungIteration } from '../scheduler/watchdog.js';
import { MAX_DEVICES_PER_JOB, Session } from '../executor/session.js';
import { Residency } from '../executor/residency.js';
import type { OpenedGpu } from '../executor/gpu.js';
import type { ServiceEvent } from '../protocol/api.js';
import { ErrorCode, type Hello, type JobMessage } from '../protocol/messages.js';
import { requestIds } from '../protocol/commandCodec.js';
import { nodeName } from '../cluster/nodeName.js';
import type { JobHints, JobInfo, MemoryMap, PolicyInfo, PolicyName, PolicyParamValue, ServiceSnapshot } from '../protocol/state.js';
import { FINAL_STATES } from '../protocol/state.js';
import { appendOutput, jobMemoryUse, recordGpuError, toJobInfo, type JobPeer, type JobRecord } from './jobs.js';
import { BusyMeter } from './metrics.js';
import type { MeasuredProfile, ServiceHistory } from '../history/types.js';
import { signalProcesses } from './peerProcess.js';

export const SERVICE_VERSION = '0.1.0';

/** How long a job that vanished without a goodbye waits for its launcher's exit report. */
const EXIT_REPORT_GRACE_MS = 1500;
/** Finished jobs kept in the table. */
const MAX_FINISHED_JOBS = 500;
/** Events are coalesced to at most one of each kind per this many milliseconds. */
const EVENT_INTERVAL_MS = 100;

export interface ServiceOptions {
  gpu: OpenedGpu;
  capacityBytes: number;
  capacitySource: string;
  policy?: PolicyName;
  params?: Record<string, PolicyParamValue>;
  /** The bulk channel's folder (core/platform/bulkDir.ts), or null to send all bytes on the socket. */
  bulkDir?: string | null;
  /** Where log lines go (stderr by default). */
  log?: (line: string) => void;
}

/** A failure of a control call that the caller should see as is. */
export class ControlError extends Error {
  constructor(message: string, readonly code: number = ErrorCode.InvalidArgument) {
    super(message);
  }
}

/** Emits `event` (ServiceEvent) for subscribers. */
export class SalusService extends EventEmitter {
  readonly memory: MemoryManager;
  readonly scheduler: Scheduler;
  private readonly residency: Residency;
  private readonly jobs = new Map<string, JobRecord>();
  private readonly waiting: JobRecord[] = [];
  private nextJob = 1;
  /** The job history (core/history), when kept: earlier runs' jobs join the table, and job numbers go on from theirs. */
  history: ServiceHistory | null = null;
  private readonly dirty = new Set<'jobs' | 'memory' | 'policy'>();
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly metricsTimer: NodeJS.Timeout;
  private readonly busy = new BusyMeter();
  private lastIterations = new Map<string, number>();
  private readonly stopWatchdog: () => void;
  readonly log: (line: string) => void;

  constructor(readonly options: ServiceOptions) {
    super();
    this.setMaxListeners(0);
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.memory = createMemoryManager({
      capacityBytes: options.capacityBytes,
      capacitySource: options.capacitySource,
      allocator: deviceAllocator(options.gpu.device),
    });
    this.residency = new Residency(this.memory, this.log);
    this.scheduler = createScheduler({ policy: options.policy ?? 'FIFO', params: options.params });
    this.stopWatchdog = watchIterations(this.scheduler, (hung) => this.endHung(hung));
    this.scheduler.onDidChange((change) => {
      if (change.type === 'grant') {
        this.busy.start(change.laneId);
        this.handOverLane(change.laneId, change.jobId);
      }
      if (change.type === 'finish' || change.type === 'abort') this.busy.stop(change.laneId);
      if (change.type === 'policy') {
        this.markDirty('policy');
        this.admitWaiting();
      }
      this.markDirty('jobs');
      this.markDirty('memory');
    });
    this.metricsTimer = setInterval(() => this.emitMetrics(), 1000);
    this.metricsTimer.unref();
  }

  // ---- jobs -------------------------------------------------------------

  /** Keeps a job history; call before any job connects. */
  useHistory(history: ServiceHistory): void {
    this.history = history;
    this.nextJob = Math.max(this.nextJob, history.firstJobNumber);
  }

  /** A job connected and said hello. */
  openJob(hello: Hello, peer: JobPeer): JobRecord {
    const id = `job-${this.nextJob++}`;
    const hints: JobHints = hello.hints ?? {};
    const job: JobRecord = {
      id, name: hello.name || id, state: 'queued', hints, priority: hints.priority ?? 0,
      pid: hello.pid ?? null, submittedAt: Date.now(), startedAt: null, finishedAt: null, closedAt: null, error: null,
      laneId: null, seq: this.nextJob, peer, session: null, admit: null, refuse: null,
      exitCode: null, killed: false, iterationSource: 'inferred', final: null, output: '', gpuErrors: { count: 0, first: null },
      file: hello.file ?? null, args: hello.args ?? [],
    };
    this.jobs.set(id, job);
    this.log(`salus: ${id} '${job.name}' connected (pid ${job.pid ?? '?'})`);
    this.trimFinished();
    this.markDirty('jobs');
    this.emit('jobOpened', job);
    return job;
  }

  /** A message from a job's connection (already schema-checked). */
  handleJobMessage(job: JobRecord, message: JobMessage, payload: Uint8Array): Promise<void> | void {
    switch (message.t) {
      case 'batch':
        if (!job.session) {
          const why = 'GPU commands before requestDevice resolved';
          job.peer?.send({ t: 'error', code: ErrorCode.NotAllowed, message: why });
          // Each request of the refused batch still gets its one reply, or its caller would wait forever.
          for (const rid of requestIds(message.batch)) job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.NotAllowed, message: why } });
          return;
        }
        return job.session.enqueue(message.batch, payload);
      case 'requestDevice':
        return this.requestDevice(job, message.rid);
      case 'hints':
        this.updateHints(job, message.hints);
        return;
      case 'goodbye':
        job.exitCode = message.exitCode;
        return;
    }
  }

  /** The job's connection closed: everything it holds is returned now. */
  closeJob(job: JobRecord): void {
    job.peer = null;
    job.closedAt ??= Date.now();
    if (FINAL_STATES.includes(job.state)) return;
    this.detach(job);
    if (job.killed) return this.finish(job, 'killed', 'killed');
    if (job.exitCode !== null) return this.finishFromExit(job);
    // No goodbye: the launcher may still report the exit code.
    setTimeout(() => {
      if (FINAL_STATES.includes(job.state)) return;
      if (job.exitCode !== null) this.finishFromExit(job);
      else this.finish(job, 'failed', 'the job disconnected without finishing (crashed or was killed outside Salus)');
    }, EXIT_REPORT_GRACE_MS).unref();
  }

  /** A launcher saw the job's process exit (`salus run`, or the service's own launcher). */
  reportExit(pid: number, exitCode: number | null, signal: string | null): void {
    for (const job of this.jobs.values()) {
      if (job.pid !== pid || job.finishedAt !== null) continue;
      job.exitCode = exitCode ?? 128;
      if (signal && !job.killed) job.error = `the job process was ended by ${signal}`;
      if (!job.peer) this.finishFromExit(job);
    }
  }

  /**
   * The shared GPU device was lost (a driver reset, the GPU gone): every job's
   * device is lost with it. Each job is told (its `device.lost` resolves with
   * `message`), hung up on and failed; its memory goes with the device. The
   * caller then exits so that a supervisor starts a service on a fresh device.
   */
  loseGpu(message: string): void {
    const reason = `the GPU device was lost: ${message}`;
    this.log(`salus: ${reason}; every job on it is failed`);
    for (const job of this.jobs.values()) {
      if (!FINAL_STATES.includes(job.state)) this.endWithLostDevice(job, 'unknown', reason, 'failed', reason);
    }
  }

  kill(id: string): void {
    const job = this.job(id);
    if (FINAL_STATES.includes(job.state)) return;
    job.killed = true;
    // Only a process the OS says is this job's is signalled (a hello may name any pid); read before hanging up.
    const pids = job.peer?.verifiedPids(job.pid) ?? [];
    job.peer?.send({ t: 'state', state: 'killed', message: `${id} was killed (salus kill)` });
    this.endWithLostDevice(job, 'destroyed', 'the job was killed (salus kill)', 'killed', 'killed');
    if (job.pid !== null && pids.length === 0) this.log(`salus: ${id}: its process could not be verified from the OS, so it was ended by its socket only`);
    signalProcesses(pids, 'SIGTERM');
  }

  /** Ends a job that passed a limit of the service: its device is lost with `reason`, it is failed and hung up on. */
  failJob(job: JobRecord, reason: string): void {
    if (!FINAL_STATES.includes(job.state)) this.endWithLostDevice(job, 'unknown', reason, 'failed', reason);
  }

  pause(id: string): void {
    const job = this.job(id);
    if (job.state !== 'running') throw new ControlError(`${id} is ${job.state}; only a running job can be paused`);
    this.scheduler.pause(id);
    job.state = 'paused';
    job.peer?.send({ t: 'state', state: 'paused' });
    this.markDirty('jobs');
  }

  resume(id: string): void {
    const job = this.job(id);
    if (job.state !== 'paused') throw new ControlError(`${id} is ${job.state}; only a paused job can be resumed`);
    this.scheduler.resume(id);
    job.state = 'running';
    job.peer?.send({ t: 'state', state: 'running' });
    this.markDirty('jobs');
  }

  setPriority(id: string, priority: number): void {
    const job = this.job(id);
    if (!Number.isFinite(priority)) throw new ControlError('priority must be a finite number');
    job.priority = priority;
    if (job.session) this.scheduler.setPriority(id, priority);
    this.markDirty('jobs');
  }

  /** The job's captured output (launched by the service, or relayed by `salus run`); the last 256 KiB. */
  jobOutput(id: string): string {
    return (this.jobs.has(id) ? null : this.history?.output(id)) ?? this.job(id).output;
  }

  appendOutput(id: string, text: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    appendOutput(job, text);
    this.emit('event', { type: 'output', jobId: id, stream: 'stdout', text } satisfies ServiceEvent);
  }

  /** Output relayed by a job's launcher (`salus run`), for the job with that process id (the newest, if several). */
  appendOutputOfPid(pid: number, text: string): void {
    const job = [...this.jobs.values()].reverse().find((j) => j.pid === pid);
    if (job) this.appendOutput(job.id, text);
  }

  findJobByPid(pid: number): JobRecord | undefined {
    for (const job of this.jobs.values()) if (job.pid === pid && job.finishedAt === null) return job;
    return undefined;
  }

  // ---- policy -----------------------------------------------------------

  setPolicy(name: PolicyName, params?: Record<string, PolicyParamValue>): PolicyInfo {
    try {
      return this.scheduler.setPolicy(name, params);
    } catch (error) {
      throw new ControlError((error as Error).message);
    }
  }

  setPolicyParams(params: Record<string, PolicyParamValue>): PolicyInfo {
    try {
      return this.scheduler.setParams(params);
    } catch (error) {
      throw new ControlError((error as Error).message);
    }
  }

  // ---- state ------------------------------------------------------------

  jobInfos(): JobInfo[] {
    return withAttainedFractions([...(this.history?.earlierJobs ?? []), ...[...this.jobs.values()].map((job) => toJobInfo(job, this.liveStats(job)))]);
  }

  memoryMap(): MemoryMap {
    const map = this.memory.snapshot();
    // The scheduler knows who holds each lane now (a job's memory iteration can end later).
    for (const lane of map.lanes) lane.running = this.scheduler.runningIn(lane.id);
    for (const entry of map.jobs) {
      const job = this.jobs.get(entry.id);
      if (job) Object.assign(entry, jobMemoryUse(job, this.memory));
    }
    return map;
  }

  policyInfo(): PolicyInfo {
    return this.scheduler.policyInfo();
  }

  snapshot(): ServiceSnapshot {
    return {
      version: SERVICE_VERSION,
      node: nodeName(),
      gpu: this.options.gpu.info,
      jobs: this.jobInfos(),
      memory: this.memoryMap(),
      policy: this.policyInfo(),
      busyShare: this.busy.lastShare,
      at: Date.now(),
    };
  }

  /** Stops timers and closes every job. */
  dispose(): void {
    this.stopWatchdog();
    clearInterval(this.metricsTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const job of this.jobs.values()) {
      job.peer?.close();
      this.detach(job);
    }
    this.scheduler.dispose();
  }

  // ---- internals --------------------------------------------------------

  private job(id: string): JobRecord {
    const job = this.jobs.get(id);
    if (!job && this.history?.earlierJobs.some((j) => j.id === id)) throw new ControlError(`${id} ended in an earlier run of the service`, ErrorCode.NotAllowed);
    if (!job) throw new ControlError(`no job '${id}' (see \`salus jobs\`)`, ErrorCode.NotFound);
    return job;
  }

  /**
   * A job's requestDevice. Its first waits for admission; later ones (a job may
   * hold many devices, all counted as this one job) are answered at once, or
   * with the first once that is admitted.
   */
  private requestDevice(job: JobRecord, rid: number): void {
    const deviceInfo = { limits: this.options.gpu.limits, features: this.options.gpu.info.features };
    if (FINAL_STATES.includes(job.state)) {
      job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.NotAllowed, message: `this job has ended (${job.state})${job.error ? `: ${job.error}` : ''}` } });
      return;
    }
    if (job.session) {
      if (job.session.deviceCount >= MAX_DEVICES_PER_JOB) {
        job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.Refused, message: `a job may hold at most ${MAX_DEVICES_PER_JOB} devices at once; destroy the ones it no longer uses` } });
      } else {
        job.peer?.send({ t: 'reply', rid, result: deviceInfo });
      }
      return;
    }
    if (job.admit && job.refuse) {
      const [admit, refuse] = [job.admit, job.refuse];
      job.admit = (laneId) => { admit(laneId); job.peer?.send({ t: 'reply', rid, result: deviceInfo }); };
      job.refuse = (reason) => { job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.Refused, message: reason } }); refuse(reason); };
      return;
    }
    job.admit = (laneId) => {
      job.admit = job.refuse = null;
      job.laneId = laneId;
      job.state = 'running';
      job.startedAt = Date.now();
      job.session = this.createSession(job);
      this.residency.add(job.session);
      this.scheduler.addJob({ id: job.id, laneId, priority: job.priority, itersTotal: job.hints.iterations ?? null, durationMs: job.hints.durationMs ?? null, share: job.hints.share, submittedAtMs: job.submittedAt });
      this.log(`salus: ${job.id} admitted to ${laneId}`);
      job.peer?.send({ t: 'state', state: 'running' });
      job.peer?.send({ t: 'reply', rid, result: deviceInfo });
      this.markDirty('jobs');
    };
    job.refuse = (reason) => {
      job.admit = job.refuse = null;
      job.peer?.send({ t: 'state', state: 'failed', message: reason });
      job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.Refused, message: reason } });
      this.finish(job, 'failed', reason);
    };
    this.waiting.push(job);
    this.admitWaiting();
    if (job.state === 'queued' && this.waiting.includes(job)) {
      job.peer?.send({ t: 'state', state: 'queued', message: this.waitReason.get(job.id) });
    }
  }

  private readonly waitReason = new Map<string, string>();
  /** What an earlier clean run of a waiting job's program measured, for a job that declares no memory (null: none). */
  private readonly measured = new Map<string, MeasuredProfile | null>();

  /**
   * The memory a waiting job asks admission for: what it declared, else the largest iteration that the newest
   * clean run of the same file and arguments measured, so its lane has room for its iterations before the
   * first one (ephemeral memory cannot page). Its persistent memory is not reserved from the profile: it is
   * counted as it is allocated, and may page, so a program that ran before is never held back where it would
   * run slower by paging. A job seen for the first time is admitted on nothing and measured as it runs.
   */
  private admissionHints(job: JobRecord): JobHints {
    const { persistentBytes, ephemeralBytes } = job.hints;
    if (persistentBytes !== undefined || ephemeralBytes !== undefined || !job.file || !this.history) return job.hints;
    if (!this.measured.has(job.id)) {
      const profile = this.history.measuredProfile(job.file, job.args);
      this.measured.set(job.id, profile);
      if (profile) {
        this.log(`salus: ${job.id} declares no memory; ${profile.jobId} (run ${profile.runId}) ran it and measured ` +
          `${formatBytes(profile.persistentBytes)} of state and ${formatBytes(profile.ephemeralBytes)} per iteration: its lane makes room for that`);
      }
    }
    const profile = this.measured.get(job.id);
    return profile ? { ...job.hints, ephemeralBytes: profile.ephemeralBytes } : job.hints;
  }

  /** Tries every waiting job in arrival order: a small job may pass a big one that still waits. */
  private admitWaiting(): void {
    for (const job of [...this.waiting]) {
      const result = this.memory.admit({ jobId: job.id, ...this.admissionHints(job) }, { maxLanes: this.scheduler.maxLanes() });
      if (result.kind === 'wait') {
        if (this.waitReason.get(job.id) !== result.reason) this.log(`salus: ${job.id} waits: ${result.reason}`);
        this.waitReason.set(job.id, result.reason);
        job.error = null;
        continue;
      }
      this.waiting.splice(this.waiting.indexOf(job), 1);
      this.waitReason.delete(job.id);
      this.measured.delete(job.id);
      if (result.kind === 'admitted') job.admit?.(result.laneId);
      else job.refuse?.(result.reason);
    }
    this.markDirty('memory');
  }

  /**
   * A lane passes to `jobId`: what the others of the lane freed in their last iteration goes back to the lane's
   * pool now (their memory side normally ends at their next command, after the frees that follow a sync), so
   * the lane holds one iteration's working set and not one per job. What they still hold stays theirs.
   */
  private handOverLane(laneId: string, jobId: string): void {
    for (const job of this.jobs.values()) {
      if (job.laneId === laneId && job.id !== jobId) this.memory.returnFreed(job.id);
    }
  }

  private createSession(job: JobRecord): Session {
    return new Session(job.id, this.options.gpu.device, this.memory, {
      acquireIteration: () => this.scheduler.requestIteration(job.id),
      prepareBatch: (cmds) => (job.session ? this.residency.prepare(job.session, cmds) : undefined),
      releaseBatch: () => job.session && this.residency.release(job.session),
      finishIteration: (elapsedMs, counted) => {
        if (this.scheduler.jobStats(job.id)?.running) this.scheduler.finishIteration(job.id, elapsedMs, { counted });
        const done = this.scheduler.jobStats(job.id)?.itersDone ?? 0;
        if (job.hints.iterations && done >= job.hints.iterations) this.markDirty('jobs');
      },
      reply: (rid, result, payload) => job.peer?.send({ t: 'reply', rid, result: result ?? null }, payload),
      replyError: (rid, message, gpu) => job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.InvalidArgument, message, gpu } }),
      uncaptured: (error, device) => {
        if (recordGpuError(job, error)) this.log(`salus: ${job.id}: first uncaptured GPU error (${error.type}): ${error.message}`);
        this.markDirty('jobs');
        job.peer?.send({ t: 'uncaptured', error, device });
      },
      whenWritable: () => job.peer?.whenWritable() ?? null,
      log: (message) => this.log(`salus: ${job.id}: ${message}`),
    }, this.options.bulkDir ?? null);
  }

  private updateHints(job: JobRecord, hints: JobHints): void {
    job.hints = { ...job.hints, ...hints };
    if (hints.priority !== undefined) this.setPriority(job.id, hints.priority);
    if (hints.iterations !== undefined && job.session) this.scheduler.setTotal(job.id, hints.iterations);
    if ((hints.durationMs !== undefined || hints.share !== undefined) && job.session) this.scheduler.setDeclared(job.id, hints);
    this.markDirty('jobs');
  }

  /** Keeps the job's last numbers, then lets go of its session, lane grants and memory. */
  private detach(job: JobRecord): void {
    job.session?.settleIteration();
    const live = this.liveStats(job);
    if (live) job.final = live;
    if (job.session) job.iterationSource = job.session.iterationSource;
    const waitingAt = this.waiting.indexOf(job);
    if (waitingAt >= 0) this.waiting.splice(waitingAt, 1);
    this.waitReason.delete(job.id);
    job.admit = job.refuse = null;
    if (job.session) this.residency.remove(job.session);
    job.session?.close();
    job.session = null;
    this.scheduler.removeJob(job.id);
    this.memory.release(job.id);
    job.laneId = null;
    this.admitWaiting();
    this.markDirty('jobs');
    this.markDirty('memory');
  }

  /**
   * The watchdog gave up on the job's iteration: the job is told why and failed,
   * its memory returns and its lane runs the next job. (Its process exits on
   * hearing it; a job too stuck to hear is the user's to stop.)
   */
  private endHung(hung: HungIteration): void {
    const job = this.jobs.get(hung.jobId);
    if (!job || FINAL_STATES.includes(job.state)) return;
    const message = describeHung(hung);
    job.peer?.send({ t: 'state', state: 'failed', message });
    this.endWithLostDevice(job, 'unknown', message, 'failed', message);
  }

  private finishFromExit(job: JobRecord): void {
    if (job.exitCode === 0) this.finish(job, 'done', null);
    else this.finish(job, 'failed', job.error ?? `the job exited with code ${job.exitCode}`);
  }

  /** Tells the job its device is lost (why), ends it in `state` and hangs up; its memory returns. */
  private endWithLostDevice(job: JobRecord, reason: 'destroyed' | 'unknown', message: string, state: 'failed' | 'killed', error: string): void {
    const peer = job.peer;
    peer?.send({ t: 'lost', reason, message });
    job.closedAt = Date.now();
    // Unconditionally: a queued job has no session or lane, but must leave the waiting list.
    this.detach(job);
    this.finish(job, state, error);
    peer?.close();
  }

  private finish(job: JobRecord, state: 'done' | 'failed' | 'killed', error: string | null): void {
    if (FINAL_STATES.includes(job.state)) return;
    if (job.session || job.laneId) this.detach(job);
    this.measured.delete(job.id);
    job.state = state;
    job.error = state === 'killed' ? null : error;
    job.finishedAt = job.closedAt ?? Date.now();
    const gpuErrors = job.gpuErrors.count > 0 ? ` (${job.gpuErrors.count} uncaptured GPU errors)` : '';
    this.log(`salus: ${job.id} ${state}${error && state !== 'killed' ? `: ${error}` : ''}${gpuErrors}`);
    this.markDirty('jobs');
    this.emit('jobFinished', job);
  }

  private liveStats(job: JobRecord) {
    const stats = this.scheduler.jobStats(job.id);
    if (!stats) return null;
    const usage = this.memory.usage(job.id);
    return { ...stats, ...jobMemoryUse(job, this.memory), persistentBytes: usage.persistentBytes, ephemeralPeakBytes: usage.ephemeralPeakBytes };
  }

  private trimFinished(): void {
    const finished = [...this.jobs.values()].filter((j) => j.finishedAt !== null);
    for (const job of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_JOBS))) this.jobs.delete(job.id);
  }

  /** Marks part of the state changed; subscribers hear of it within EVENT_INTERVAL_MS. */
  markDirty(part: 'jobs' | 'memory' | 'policy'): void {
    this.dirty.add(part);
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      const parts = [...this.dirty];
      this.dirty.clear();
      if (this.listenerCount('event') === 0) return;
      for (const part of parts) {
        if (part === 'jobs') this.emit('event', { type: 'jobs', jobs: this.jobInfos() } satisfies ServiceEvent);
        if (part === 'memory') this.emit('event', { type: 'memory', memory: this.memoryMap() } satisfies ServiceEvent);
        if (part === 'policy') this.emit('event', { type: 'policy', policy: this.policyInfo() } satisfies ServiceEvent);
      }
    }, EVENT_INTERVAL_MS);
    this.flushTimer.unref();
  }

  private emitMetrics(): void {
    const share = this.busy.sample();
    const iterationsPerSecond: Record<string, number> = {};
    const next = new Map<string, number>();
    for (const job of this.jobs.values()) {
      const done = this.scheduler.jobStats(job.id)?.itersDone;
      if (done === undefined) continue;
      next.set(job.id, done);
      iterationsPerSecond[job.id] = done - (this.lastIterations.get(job.id) ?? done);
    }
    this.lastIterations = next;
    const queueLength = [...this.jobs.values()].filter((j) => j.state === 'queued').length;
    this.emit('event', { type: 'metrics', at: Date.now(), busyShare: share, queueLength, iterationsPerSecond } satisfies ServiceEvent);
  }

  /** One line describing the service, for its log. */
  describe(): string {
    const info = this.options.gpu.info;
    return `${info.description || info.device} (${info.backend}${info.isSoftware ? ', software GPU' : ''}), ` +
      `${formatBytes(this.options.capacityBytes)} capacity (${this.options.capacitySource}), policy ${this.scheduler.policyInfo().name}`;
  }
}
