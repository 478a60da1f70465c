/**
 * A job's iteration state, in one place: whether it holds the scheduler's grant,
 * where its iteration ends, whether that iteration counts, and when the memory
 * side of it begins and ends. Plain synchronous code over plain data: the
 * session (core/executor/session.ts) does the waiting (for the grant, for the GPU)
 * and feeds this machine the events of the batches it replays; the machine says
 * what follows and calls its `IterationEffects` for the memory ledger and the
 * scheduler. After `close` every event is ignored (a closed session may still be
 * unwinding a batch); the events that would break the grant's bookkeeping
 * anywhere else throw.
 *
 * Scheduling side (`phase`):
 *
 * ```
 *   idle ──grantRequested──▶ awaitingGrant ──granted──▶ running ──endRequested──▶ ending
 *    ▲                          │ grantRefused                                   │   │ settle (counted now,
 *    ├──────────────────────────┘                                  gpuDone       │   ▼  GPU reading still out)
 *    ├───────────────────────────────────────────────────────────────────────────┘ settled
 *    └──────────────────────────────────────── gpuDone ─────────────────────────────────┘
 *   any ──close──▶ closed
 * ```
 *
 * | event (session call)          | from                     | to / effect                                              |
 * |-------------------------------|--------------------------|----------------------------------------------------------|
 * | grantRequested                | idle                     | awaitingGrant                                            |
 * | grantRefused                  | awaitingGrant            | idle                                                     |
 * | granted(nowMs, unmarked)      | awaitingGrant            | running; memory side begins at the next non-release op   |
 * | endRequested                  | running / idle           | ending / idle (nothing to end: the GPU is still awaited) |
 * | settle(nowMs)                 | ending (else ignored)    | settled; finish(wall time)                               |
 * | gpuDone(gpuMs, nowMs)         | ending / settled / idle  | idle; from ending: finish(GPU span or wall time)         |
 * | close                         | any                      | closed; an open memory side ends                         |
 *
 * Within a batch (legal in every phase but closed): `startBatch`, `submitted`,
 * `dispatched`, `syncPoint` (mapAsync, workDone, popErrorScope), `nonRelease` (any
 * command but a release), the SDK's `markedBegin`, and `batchEnds`.
 *
 * An iteration is inferred (from the first submit after a sync point to the next
 * sync point, counted only if a dispatch preceded that sync) until the job marks
 * one itself (`markedBegin`): then the source is `sdk` for good, and a submit
 * outside its marked iterations is granted as unmarked work (scheduled, not counted).
 *
 * Memory side (`memoryPhase`): a grant makes a new memory iteration pending; it
 * begins at the job's next command that is not a release, where the previous one
 * ends (after the job freed what it used). An SDK iteration's memory ends with it.
 *
 * | memoryPhase | meaning                                   | nonRelease                          |
 * |-------------|-------------------------------------------|-------------------------------------|
 * | none        | no memory iteration                       | stays                               |
 * | pending     | granted, not begun                        | begin → open                        |
 * | open        | begun                                     | end → none, unless the grant holds  |
 * | reopening   | begun, and a newer grant waits to begin   | end, begin → open                   |
 */

/** Where the job stands with the scheduler's grant. */
export type IterationPhase = 'idle' | 'awaitingGrant' | 'running' | 'ending' | 'settled' | 'closed';

/** Where the memory side of the job's iterations stands (see the table above). */
export type MemoryPhase = 'none' | 'pending' | 'open' | 'reopening';

/** Who marks the job's iterations: inferred from its sync points until its SDK marks one. */
export type IterationSource = 'sdk' | 'inferred';

/** What the machine's transitions do outside it. */
export interface IterationEffects {
  /** The memory ledger's iteration for the job begins (MemoryManager.beginIteration). */
  beginMemory(): void;
  /** The memory ledger's iteration for the job ends: what it allocated is freed or persists. */
  endMemory(): void;
  /** The grant ends after `elapsedMs`; `counted` is false for work that is not one of the job's iterations. */
  finish(elapsedMs: number, counted: boolean): void;
}

export class IterationMachine {
  private phaseNow: IterationPhase = 'idle';
  private memoryNow: MemoryPhase = 'none';
  private sourceNow: IterationSource = 'inferred';
  private startedAtMs = 0;
  /** False while the grant in progress is an SDK job's unmarked work. */
  private grantIsIteration = true;
  private submittedSinceGrant = false;
  /** A dispatch replayed since the last inferred sync point; an inferred iteration counts only if it synced after one (not a readback alone). */
  private dispatchedSinceSync = false;
  private syncedAfterDispatch = false;
  /** The batch's inferred iteration reached a sync point: it ends with the batch. */
  private endAfterBatch = false;
  /** The batch holds an unmarked grant, which ends with the batch. */
  private unmarkedInBatch = false;

  constructor(private readonly effects: IterationEffects) {}

  get phase(): IterationPhase {
    return this.phaseNow;
  }

  get memoryPhase(): MemoryPhase {
    return this.memoryNow;
  }

  get source(): IterationSource {
    return this.sourceNow;
  }

  /** Whether the job holds its lane for an iteration now (granted and not yet finished). */
  get running(): boolean {
    return this.phaseNow === 'running' || this.phaseNow === 'ending';
  }

  /** Whether a batch with (`hasSubmit`) a submit must wait for a grant before it replays: an inferred job's, outside an iteration. */
  batchNeedsGrant(hasSubmit: boolean): boolean {
    return hasSubmit && this.sourceNow === 'inferred' && !this.running;
  }

  /** Whether a submit must wait for a grant first: an SDK job's, outside its marked iterations (granted as unmarked work). */
  submitNeedsGrant(): boolean {
    return this.sourceNow === 'sdk' && !this.running;
  }

  /** A batch starts replaying. */
  startBatch(): void {
    this.endAfterBatch = false;
    this.unmarkedInBatch = false;
  }

  grantRequested(): void {
    if (this.phaseNow === 'closed') return;
    this.expect('grantRequested', 'idle');
    this.phaseNow = 'awaitingGrant';
  }

  /** The grant did not come (the scheduler refused it, or the session closed meanwhile). */
  grantRefused(): void {
    if (this.phaseNow === 'closed') return;
    this.expect('grantRefused', 'awaitingGrant');
    this.phaseNow = 'idle';
  }

  /** The grant came at `nowMs`; `unmarked`: it is for an SDK job's work outside its iterations, and ends with the batch. */
  granted(nowMs: number, unmarked = false): void {
    if (this.phaseNow === 'closed') return;
    this.expect('granted', 'awaitingGrant');
    this.phaseNow = 'running';
    this.memoryNow = this.memoryNow === 'open' || this.memoryNow === 'reopening' ? 'reopening' : 'pending';
    this.submittedSinceGrant = false;
    this.startedAtMs = nowMs;
    if (unmarked) {
      this.unmarkedInBatch = true;
      this.grantIsIteration = false;
    }
  }

  /** The job's SDK marks an iteration's begin: true when the grant held now (inferred or unmarked) must end first. */
  endsBeforeMarkedBegin(): boolean {
    return (this.sourceNow === 'inferred' || this.unmarkedInBatch) && this.running;
  }

  /** After `endsBeforeMarkedBegin` (and the end it asked for): the job marks its iterations from now on. */
  markedBegin(): void {
    this.unmarkedInBatch = false;
    this.sourceNow = 'sdk';
  }

  /** A submit replayed. */
  submitted(): void {
    this.submittedSinceGrant = true;
  }

  /** A dispatch replayed. */
  dispatched(): void {
    this.dispatchedSinceSync = true;
  }

  /**
   * A sync point (the job waits on the GPU there). An inferred iteration that
   * submitted ends with this batch. Returns whether the iteration's end may be
   * marked here (it holds the grant and submitted since it).
   */
  syncPoint(): boolean {
    if (this.phaseNow === 'closed' || !this.running || !this.submittedSinceGrant) return false;
    if (this.sourceNow === 'inferred') {
      this.endAfterBatch = true;
      this.syncedAfterDispatch ||= this.dispatchedSinceSync;
      this.dispatchedSinceSync = false;
    }
    return true;
  }

  /** A command that is not a release: the memory side catches up with the scheduling side. */
  nonRelease(): void {
    if (this.phaseNow === 'closed') return;
    if (this.memoryNow === 'reopening' || (this.memoryNow === 'open' && !this.running)) this.endMemorySide();
    if (this.memoryNow === 'pending') {
      this.memoryNow = 'open';
      this.effects.beginMemory();
    }
  }

  /** At the batch's end: whether the grant ends with it (an inferred iteration that synced, or unmarked work). */
  batchEnds(): boolean {
    return this.endAfterBatch || (this.unmarkedInBatch && this.running);
  }

  /** The session starts waiting for the iteration's GPU work. */
  endRequested(): void {
    if (this.phaseNow === 'closed' || this.phaseNow === 'idle') return;
    this.expect('endRequested', 'running');
    this.phaseNow = 'ending';
  }

  /**
   * The GPU work awaited since `endRequested` is done, at `nowMs`, with its GPU
   * span `gpuMs` (null: unmeasured). From ending, the grant finishes: with the
   * GPU span unless it is longer than the wall time since the grant (then it
   * cannot be this iteration's, e.g. its first submit failed validation).
   */
  gpuDone(gpuMs: number | null, nowMs: number): void {
    const from = this.phaseNow;
    if (from === 'closed' || from === 'idle') return;
    if (from === 'settled') {
      this.phaseNow = 'idle';
      return;
    }
    this.expect('gpuDone', 'ending');
    this.phaseNow = 'idle';
    if (this.memoryNow === 'reopening') this.memoryNow = 'open';
    else if (this.memoryNow === 'pending') this.memoryNow = 'none';
    if (this.sourceNow === 'sdk' && this.memoryNow === 'open') this.endMemorySide();
    const wallMs = nowMs - this.startedAtMs;
    this.effects.finish(gpuMs !== null && gpuMs <= wallMs ? gpuMs : wallMs, this.takeCounted());
  }

  /**
   * Counts now, at `nowMs`, an iteration that reached its end (the job already
   * waited on its results) but whose GPU reading has not come back, e.g. because
   * the job is exiting. Ignored outside ending.
   */
  settle(nowMs: number): void {
    if (this.phaseNow !== 'ending') return;
    this.phaseNow = 'settled';
    this.effects.finish(nowMs - this.startedAtMs, this.takeCounted());
  }

  /**
   * Ends now the memory side of an iteration whose scheduling side ended (it
   * would end at the job's next non-release command), so that what it still
   * holds counts as persistent. The session calls it only between batches.
   */
  settleMemory(): void {
    if (this.phaseNow !== 'closed' && !this.running && this.memoryNow === 'open') this.endMemorySide();
  }

  /** The session closed: an open memory side ends; every later event is ignored. */
  close(): void {
    if (this.phaseNow === 'closed') return;
    this.phaseNow = 'closed';
    if (this.memoryNow === 'open' || this.memoryNow === 'reopening') this.effects.endMemory();
    this.memoryNow = 'none';
  }

  private endMemorySide(): void {
    this.memoryNow = this.memoryNow === 'reopening' ? 'pending' : 'none';
    this.effects.endMemory();
  }

  /** Whether the grant now ending is one of the job's iterations; the next grant is, unless said otherwise. */
  private takeCounted(): boolean {
    const counted = this.grantIsIteration && (this.sourceNow === 'sdk' || this.syncedAfterDispatch);
    this.grantIsIteration = true;
    this.syncedAfterDispatch = false;
    return counted;
  }

  private expect(event: string, phase: IterationPhase): void {
    if (this.phaseNow !== phase) throw new Error(`iteration state: ${event} is illegal in ${this.phaseNow} (only in ${phase})`);
  }
}
