/**
 * The Salus service, as composition: its GPUs (serviceGpu.ts: each a shared
 * device with its own memory manager and scheduler), the job table
 * (jobTable.ts, the only writer of job state), the admission queue
 * (admissionQueue.ts) and the publisher of events (publisher.ts). Transports
 * (core/server's socket, core/bridge's WebSocket) hand it job messages; control
 * calls reach it through control.ts. It admits jobs (they wait `queued` until
 * their memory fits on some GPU; all of a job's devices live on the GPU it was
 * placed on), gives each admitted job a session that replays its GPU work one
 * granted iteration at a time, and publishes its state. Nothing a job sends
 * can take it down: every failure stays with that job.
 *
 * Past 450 lines on purpose: every operation of a job's lifecycle (hello,
 * device requests, admission, pause, kill, exit, hang, lost GPU) reads best in
 * one place, in the order a job meets them; what keeps state of its own is in
 * the files beside this one.
 */
import { withAttainedFractions, type SchedulerChange } from '../scheduler/index.js';
import { describeHung, watchIterations, type HungIteration } from '../scheduler/watchdog.js';
import { MAX_DEVICES_PER_JOB, TOO_MANY_DEVICES } from '../executor/jobDevices.js';
import { ErrorCode, type Hello, type JobMessage } from '../protocol/messages.js';
import { requestIds } from '../protocol/commandCodec.js';
import { nodeName } from '../platform/nodeName.js';
import { signalProcesses } from '../platform/processAlive.js';
import type { JobHints, JobInfo, MemoryMap, PolicyInfo, PolicyName, PolicyParamValue, ServiceSnapshot } from '../protocol/state.js';
import { appendOutput, jobMemoryUse, toJobInfo, type IdentifiedPeer, type JobPeer, type JobRecord } from './jobRecord.js';
import { createJobSession } from './jobSession.js';
import { isFinal, JobTable, type FinalState, type JobStateChange } from './jobTable.js';
import { AdmissionQueue, type AdmissionOutcome } from './admissionQueue.js';
import { Publisher, type StatePart } from './publisher.js';
import { Emitter, type Event } from './events.js';
import type { ServiceHistory } from './serviceHistory.js';
import type { ServiceEvent } from '../protocol/api.js';
import { commonGpu, describeGpus, gpusMemoryMap, onEveryScheduler, ServiceGpu, type GpuSchedulerChange, type GpuSetup, type WelcomeGpu } from './serviceGpu.js';

export const SERVICE_VERSION = '0.1.0';

/** How long a job that vanished without a goodbye waits for its launcher's exit report. */
const EXIT_REPORT_GRACE_MS = 1500;

export interface ServiceOptions {
  /** The GPUs to share, in order (ids `gpu0`, `gpu1`, … unless given); at least one. */
  gpus: GpuSetup[];
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

/** A job whose connection the OS has identified (core/server/peerProcess.ts); `peer` null where the OS cannot say. */
export interface JobIdentified {
  job: JobRecord;
  peer: IdentifiedPeer | null;
}

export class SalusService {
  /** The GPUs it shares, in order; at least one. */
  readonly gpus: readonly ServiceGpu[];
  /** The job history (core/history), when kept: earlier runs' jobs join the table, and job numbers go on from theirs. */
  history: ServiceHistory | null = null;
  readonly log: (line: string) => void;
  private readonly jobs = new JobTable();
  private readonly admission: AdmissionQueue;
  private readonly publisher: Publisher;
  private readonly didIdentify = new Emitter<JobIdentified>();
  private readonly didSchedule = new Emitter<GpuSchedulerChange>();
  private readonly stopWatchdogs: Array<() => void>;

  /** A job connected and said hello (state `queued`). */
  readonly onDidOpenJob: Event<JobRecord> = this.jobs.onDidOpenJob;
  /** A job's state changed. */
  readonly onDidChangeJob: Event<JobStateChange> = this.jobs.onDidChangeJob;
  /** A job ended: done, failed or killed. */
  readonly onDidFinishJob: Event<JobRecord> = this.jobs.onDidFinishJob;
  /** The OS said who holds a job's connection (launches match their child process by it). */
  readonly onDidIdentifyJob: Event<JobIdentified> = this.didIdentify.event;
  /** Every event for subscribers: coalesced state, metrics, output. */
  readonly onDidPublish: Event<ServiceEvent>;
  /** Grants, finishes and other scheduler changes of every GPU, after the service has acted on them. */
  readonly onDidSchedule: Event<GpuSchedulerChange> = this.didSchedule.event;

  constructor(readonly options: ServiceOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    const setups = options.gpus;
    if (setups.length === 0) throw new Error('a service needs at least one GPU');
    const gpuOptions = { policy: options.policy ?? 'FIFO', params: options.params, log: this.log, qualifyLanes: setups.length > 1 };
    this.gpus = setups.map((setup, index) => new ServiceGpu(setup, index, gpuOptions));
    this.admission = new AdmissionQueue({ targets: () => this.gpus, history: () => this.history, log: this.log });
    this.publisher = new Publisher({
      jobInfos: () => this.jobInfos(),
      memoryMap: () => this.memoryMap(),
      policyInfo: () => this.policyInfo(),
      iterationsDone: () => this.iterationsDone(),
      queueLength: () => [...this.jobs.values()].filter((job) => job.state === 'queued').length,
    });
    this.onDidPublish = this.publisher.onDidPublish;
    this.jobs.onDidChangeJob(() => this.markDirty('jobs'));
    this.stopWatchdogs = this.gpus.map((gpu) => watchIterations(gpu.scheduler, (hung) => this.endHung(hung)));
    for (const gpu of this.gpus) gpu.scheduler.onDidChange((change) => this.onSchedulerChange(gpu, change));
  }

  // ---- jobs -------------------------------------------------------------

  /** Keeps a job history; call before any job connects. */
  useHistory(history: ServiceHistory): void {
    this.history = history;
    this.jobs.continueNumbering(history.firstJobNumber);
  }

  /** A job connected and said hello. */
  openJob(hello: Hello, peer: JobPeer): JobRecord {
    const job = this.jobs.open(hello, peer);
    this.log(`salus: ${job.id} '${job.name}' connected (pid ${job.pid ?? '?'})`);
    this.markDirty('jobs');
    return job;
  }

  /**
   * The OS said who holds the job's connection (`peer`, null where it cannot
   * say): the pid it found replaces the one the hello claimed.
   */
  identifyJob(job: JobRecord, peer: IdentifiedPeer | null, pid: number | null): void {
    if (pid !== null && pid !== job.pid) {
      this.log(`salus: ${job.id} said it was pid ${job.pid ?? '(none)'}, but its socket is held by pid ${pid}`);
      job.pid = pid;
      this.markDirty('jobs');
    }
    this.didIdentify.fire({ job, peer });
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
    if (isFinal(job.state)) return;
    this.detach(job);
    if (job.killed) return this.finish(job, 'killed', 'killed');
    if (job.exitCode !== null) return this.finishFromExit(job);
    // No goodbye: the launcher may still report the exit code.
    setTimeout(() => {
      if (isFinal(job.state)) return;
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
    for (const job of this.jobs.live()) this.endWithLostDevice(job, 'unknown', reason, 'failed', reason);
  }

  kill(id: string): void {
    const job = this.job(id);
    if (isFinal(job.state)) return;
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
    if (!isFinal(job.state)) this.endWithLostDevice(job, 'unknown', reason, 'failed', reason);
  }

  pause(id: string): void {
    const job = this.job(id);
    if (job.state !== 'running') throw new ControlError(`${id} is ${job.state}; only a running job can be paused`);
    this.gpuOf(job)?.scheduler.pause(id);
    this.jobs.transition(job, 'paused');
    job.peer?.send({ t: 'state', state: 'paused' });
  }

  resume(id: string): void {
    const job = this.job(id);
    if (job.state !== 'paused') throw new ControlError(`${id} is ${job.state}; only a paused job can be resumed`);
    this.gpuOf(job)?.scheduler.resume(id);
    this.jobs.transition(job, 'running');
    job.peer?.send({ t: 'state', state: 'running' });
  }

  setPriority(id: string, priority: number): void {
    const job = this.job(id);
    if (!Number.isFinite(priority)) throw new ControlError('priority must be a finite number');
    job.priority = priority;
    if (job.session) this.gpuOf(job)?.scheduler.setPriority(id, priority);
    this.markDirty('jobs');
  }

  /** Changes the job's share of GPU time (FAIR weighs its GPU time by it), live, as its `share` hint would. */
  setShare(id: string, share: number): void {
    const job = this.job(id);
    if (!Number.isFinite(share) || share <= 0) throw new ControlError('a share must be a number above 0');
    if (isFinal(job.state)) throw new ControlError(`${id} is ${job.state}; only a queued, running or paused job's share can change`);
    this.updateHints(job, { share });
  }

  /** The job's captured output (launched by the service, or relayed by `salus run`); the last 256 KiB. */
  jobOutput(id: string): string {
    return (this.jobs.has(id) ? null : this.history?.output(id)) ?? this.job(id).output;
  }

  appendOutput(id: string, text: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    appendOutput(job, text);
    this.publisher.publish({ type: 'output', jobId: id, stream: 'stdout', text });
  }

  /** Output relayed by a job's launcher (`salus run`), for the job with that process id (the newest, if several). */
  appendOutputOfPid(pid: number, text: string): void {
    const job = this.jobs.newestByPid(pid);
    if (job) this.appendOutput(job.id, text);
  }

  // ---- policy -----------------------------------------------------------

  /** Switches every GPU's scheduler to `name`, live; a bad name or knob changes nothing (the first GPU checks it). */
  setPolicy(name: PolicyName, params?: Record<string, PolicyParamValue>): PolicyInfo {
    return this.onEveryScheduler((scheduler) => scheduler.setPolicy(name, params));
  }

  /** Changes knobs of the policy on every GPU; a bad knob changes nothing. */
  setPolicyParams(params: Record<string, PolicyParamValue>): PolicyInfo {
    return this.onEveryScheduler((scheduler) => scheduler.setParams(params));
  }

  // ---- state ------------------------------------------------------------

  jobInfos(): JobInfo[] {
    return withAttainedFractions([...(this.history?.earlierJobs ?? []), ...[...this.jobs.values()].map((job) => toJobInfo(job, this.liveStats(job)))]);
  }

  /** The memory map: every GPU's (`gpus`), and their sums at the top (DESIGN.md "JSON shapes"). */
  memoryMap(): MemoryMap {
    return gpusMemoryMap(this.gpus, (gpu, entry) => {
      const job = this.jobs.get(entry.id);
      if (job) Object.assign(entry, jobMemoryUse(job, gpu.memory));
    });
  }

  policyInfo(): PolicyInfo {
    return this.gpus[0].scheduler.policyInfo();
  }

  snapshot(): ServiceSnapshot {
    return {
      version: SERVICE_VERSION,
      node: nodeName(),
      gpu: this.gpus[0].opened.info,
      gpus: this.gpus.map((gpu) => ({ id: gpu.id, ...gpu.opened.info })),
      jobs: this.jobInfos(),
      memory: this.memoryMap(),
      policy: this.policyInfo(),
      busyShare: this.publisher.busy.lastShare,
      busyShareByGpu: Object.fromEntries(this.gpus.map((gpu) => [gpu.id, this.publisher.gpuBusy(gpu.id).lastShare])),
      at: Date.now(),
    };
  }

  /** Marks part of the state changed; subscribers hear of it within EVENT_INTERVAL_MS (publisher.ts). */
  markDirty(part: StatePart): void {
    this.publisher.markDirty(part);
  }

  /** Stops timers and closes every job. */
  dispose(): void {
    for (const stop of this.stopWatchdogs) stop();
    this.publisher.dispose();
    for (const job of this.jobs.values()) {
      job.peer?.close();
      this.detach(job);
    }
    for (const gpu of this.gpus) gpu.scheduler.dispose();
  }

  /** What describes the service, for its log: one line per GPU (with its id when there are several), then the policy. */
  describe(): string {
    return `${describeGpus(this.gpus)}, policy ${this.policyInfo().name}`;
  }

  /** The GPU a job's connection is told about before placement: its pinned one if it names one here, else what every GPU offers. */
  welcomeGpu(hints: JobHints | undefined): WelcomeGpu {
    return this.gpus.find((gpu) => gpu.id === hints?.gpu)?.opened ?? commonGpu(this.gpus);
  }

  // ---- internals --------------------------------------------------------

  private job(id: string): JobRecord {
    const job = this.jobs.get(id);
    if (!job && this.history?.earlierJobs.some((j) => j.id === id)) throw new ControlError(`${id} ended in an earlier run of the service`, ErrorCode.NotAllowed);
    if (!job) throw new ControlError(`no job '${id}' (see \`salus jobs\`)`, ErrorCode.NotFound);
    return job;
  }

  /** The GPU the job was placed on, or null while it waits (or before it asked for a device). */
  private gpuOf(job: JobRecord): ServiceGpu | null {
    return job.gpuId === null ? null : this.gpus.find((gpu) => gpu.id === job.gpuId) ?? null;
  }

  /** Runs a policy change on every GPU's scheduler, the first one first (it throws, changing nothing, on a bad one). */
  private onEveryScheduler(change: (scheduler: ServiceGpu['scheduler']) => PolicyInfo): PolicyInfo {
    try {
      return onEveryScheduler(this.gpus, change);
    } catch (error) {
      throw new ControlError((error as Error).message);
    }
  }

  /** A change of one GPU's scheduler: lanes hand over, the busy meter and subscribers hear of it. */
  private onSchedulerChange(gpu: ServiceGpu, change: SchedulerChange): void {
    if (change.type === 'grant') {
      this.publisher.busy.start(change.laneId);
      this.publisher.gpuBusy(gpu.id).start(change.laneId);
      this.handOverLane(gpu, change.laneId, change.jobId);
    }
    if (change.type === 'finish' || change.type === 'abort') {
      this.publisher.busy.stop(change.laneId);
      this.publisher.gpuBusy(gpu.id).stop(change.laneId);
    }
    // A policy change reaches every GPU; the first one's says it (and admits) once.
    if (change.type === 'policy' && gpu === this.gpus[0]) {
      this.markDirty('policy');
      this.admitWaiting();
    }
    this.markDirty('jobs');
    this.markDirty('memory');
    this.didSchedule.fire({ gpuId: gpu.id, change });
  }

  /**
   * A job's requestDevice. Its first waits for admission; later ones (a job may
   * hold many devices, all counted as this one job) are answered at once, or
   * with the first once that is admitted.
   */
  private requestDevice(job: JobRecord, rid: number): void {
    if (isFinal(job.state)) {
      job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.NotAllowed, message: `this job has ended (${job.state})${job.error ? `: ${job.error}` : ''}` } });
      return;
    }
    const placed = this.gpuOf(job);
    if (job.session && placed) {
      if (job.session.deviceCount >= MAX_DEVICES_PER_JOB) {
        job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.Refused, message: TOO_MANY_DEVICES } });
      } else {
        job.peer?.send({ t: 'reply', rid, result: placed.deviceInfo() });
      }
      return;
    }
    const waitedAlready = this.admission.has(job);
    this.admission.add(job, rid);
    if (waitedAlready) return;
    this.admitWaiting();
    if (job.state === 'queued' && this.admission.has(job)) {
      job.peer?.send({ t: 'state', state: 'queued', message: this.admission.waitReason(job.id) });
    }
  }

  /** Tries every waiting job (admissionQueue.ts) and acts on those that left the queue. */
  private admitWaiting(): void {
    for (const outcome of this.admission.admitWaiting()) {
      if (outcome.kind === 'admitted') this.admit(outcome);
      else this.refuse(outcome);
    }
    this.markDirty('memory');
  }

  private admit({ job, gpuId, laneId, rids }: Extract<AdmissionOutcome, { kind: 'admitted' }>): void {
    const gpu = this.gpus.find((candidate) => candidate.id === gpuId)!;
    job.laneId = laneId;
    job.gpuId = gpuId;
    this.jobs.transition(job, 'running');
    job.session = createJobSession(job, {
      gpu: gpu.opened, memory: gpu.memory, scheduler: gpu.scheduler, residency: gpu.residency,
      bulkDir: this.options.bulkDir ?? null, markDirty: (part) => this.markDirty(part), log: this.log,
    });
    gpu.residency.add(job.session);
    gpu.scheduler.addJob({ id: job.id, laneId, priority: job.priority, itersTotal: job.hints.iterations ?? null, durationMs: job.hints.durationMs ?? null, share: job.hints.share, submittedAtMs: job.submittedAt });
    this.log(`salus: ${job.id} admitted to ${laneId}`);
    job.peer?.send({ t: 'state', state: 'running' });
    for (const rid of rids) job.peer?.send({ t: 'reply', rid, result: gpu.deviceInfo() });
  }

  /** A job that could not fit even on an empty GPU: every request it is owed is refused (the newest first), and it fails. */
  private refuse({ job, reason, rids }: Extract<AdmissionOutcome, { kind: 'refused' }>): void {
    const [first, ...later] = rids;
    for (const rid of later.reverse()) job.peer?.send({ t: 'reply', rid, error: { code: ErrorCode.Refused, message: reason } });
    job.peer?.send({ t: 'state', state: 'failed', message: reason });
    if (first !== undefined) job.peer?.send({ t: 'reply', rid: first, error: { code: ErrorCode.Refused, message: reason } });
    this.finish(job, 'failed', reason);
  }

  /**
   * A lane passes to `jobId`: what the others of the lane freed in their last iteration goes back to the lane's
   * pool now (their memory side normally ends at their next command, after the frees that follow a sync), so
   * the lane holds one iteration's working set and not one per job. What they still hold stays theirs.
   */
  private handOverLane(gpu: ServiceGpu, laneId: string, jobId: string): void {
    for (const job of this.jobs.values()) {
      if (job.gpuId === gpu.id && job.laneId === laneId && job.id !== jobId) gpu.memory.returnFreed(job.id);
    }
  }

  private updateHints(job: JobRecord, hints: JobHints): void {
    job.hints = { ...job.hints, ...hints };
    if (hints.priority !== undefined) this.setPriority(job.id, hints.priority);
    const scheduler = job.session ? this.gpuOf(job)?.scheduler : undefined;
    if (hints.iterations !== undefined) scheduler?.setTotal(job.id, hints.iterations);
    if (hints.durationMs !== undefined || hints.share !== undefined) scheduler?.setDeclared(job.id, hints);
    this.markDirty('jobs');
  }

  /** Keeps the job's last numbers, then lets go of its session, lane grants and memory. */
  private detach(job: JobRecord): void {
    job.session?.settleIteration();
    const live = this.liveStats(job);
    if (live) job.final = live;
    if (job.session) job.iterationSource = job.session.iterationSource;
    this.admission.remove(job);
    const gpu = this.gpuOf(job);
    if (job.session) gpu?.residency.remove(job.session);
    job.session?.close();
    job.session = null;
    gpu?.scheduler.removeJob(job.id);
    gpu?.memory.release(job.id);
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
    if (!job || isFinal(job.state)) return;
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
    // Unconditionally: a queued job has no session or lane, but must leave the admission queue.
    this.detach(job);
    this.finish(job, state, error);
    peer?.close();
  }

  private finish(job: JobRecord, state: FinalState, error: string | null): void {
    if (isFinal(job.state)) return;
    if (job.session || job.laneId) this.detach(job);
    this.admission.forget(job.id);
    job.error = state === 'killed' ? null : error;
    const gpuErrors = job.gpuErrors.count > 0 ? ` (${job.gpuErrors.count} uncaptured GPU errors)` : '';
    this.log(`salus: ${job.id} ${state}${error && state !== 'killed' ? `: ${error}` : ''}${gpuErrors}`);
    this.jobs.transition(job, state);
  }

  private liveStats(job: JobRecord) {
    const gpu = this.gpuOf(job);
    const stats = gpu?.scheduler.jobStats(job.id);
    if (!gpu || !stats) return null;
    const usage = gpu.memory.usage(job.id);
    return { ...stats, ...jobMemoryUse(job, gpu.memory), persistentBytes: usage.persistentBytes, ephemeralPeakBytes: usage.ephemeralPeakBytes };
  }

  /** Iterations done by each job the scheduler knows, for the metrics sample. */
  private iterationsDone(): Map<string, number> {
    const done = new Map<string, number>();
    for (const job of this.jobs.values()) {
      const iters = this.gpuOf(job)?.scheduler.jobStats(job.id)?.itersDone;
      if (iters !== undefined) done.set(job.id, iters);
    }
    return done;
  }
}
