/**
 * Error scopes for one job on a shared device.
 *
 * The device's real scope stack is shared by every job, so a job's own
 * push/pop cannot go to it directly. Instead the job's commands are replayed in
 * *segments* (split at each push/pop the job makes), each wrapped in real
 * scopes for the error kinds the job's virtual stack has a scope for; the
 * errors a segment catches are then dispatched to the job's virtual stack as it
 * was during that segment: to the innermost scope whose filter matches (which
 * keeps only its first error), else to the job as an uncaptured error. A
 * segment never spans an `await`, so other jobs' segments nest cleanly inside
 * the device's stack.
 *
 * An error of a kind no virtual scope catches reaches the job as uncaptured,
 * every one of them, as on a local device: no real scope (which would keep only
 * the first) is pushed for it, so the shared device raises `uncapturederror`,
 * and Dawn does that synchronously, inside the call that made the error —
 * while this job's segment is the open one.
 *
 * Cost: a job may push any number of scopes (WebGPU sets no limit; the CTS
 * pushes 100,000), and every push and pop splits a segment. So the virtual stack
 * is a persistent linked list whose nodes know the innermost scope of each
 * filter at or below them: a segment keeps its stack as one pointer, and opening,
 * closing and dispatching cost O(1) in the stack's depth — never a copy of it.
 * A segment that pushed no real scope and caught nothing adds nothing to the
 * dispatch chain.
 */
import type { GpuErrorJson, GpuErrorType } from '../protocol/commands.js';

/** One scope of a job's virtual stack; immutable but for the first error it caught. */
interface VirtualScope {
  readonly filter: GpuErrorType;
  error: GpuErrorJson | null;
  /** The scope below this one (null at the bottom). */
  readonly below: VirtualScope | null;
  /** The innermost scope of each filter at or below this one: where an error of that type goes. */
  readonly innermost: Readonly<Record<GpuErrorType, VirtualScope | null>>;
}

const FILTERS: GpuErrorType[] = ['internal', 'out-of-memory', 'validation'];
const NO_FILTERS: readonly GpuErrorType[] = [];

/** The segment open on each shared device: the owner of an uncaptured error raised now. */
const openSegments = new WeakMap<GPUDevice, ErrorScopes>();
const listened = new WeakSet<GPUDevice>();

function errorType(error: GPUError): GpuErrorType {
  const name = error.constructor.name;
  return name === 'GPUOutOfMemoryError' ? 'out-of-memory' : name === 'GPUInternalError' ? 'internal' : 'validation';
}

/** Routes the shared device's uncaptured errors to the segment open when they are raised (others go on as before). */
function listenForUncaptured(device: GPUDevice): void {
  if (listened.has(device)) return;
  listened.add(device);
  device.addEventListener('uncapturederror', (event) => {
    const error = (event as GPUUncapturedErrorEvent).error;
    const owner = openSegments.get(device);
    if (!owner) return;
    event.preventDefault();
    owner.report({ type: errorType(error), message: error.message });
  });
}

export class ErrorScopes {
  /** The top of the job's virtual stack (null when empty). */
  private top: VirtualScope | null = null;
  private depthCount = 0;
  private open = false;
  /** The real scopes the open segment pushed, in push order. */
  private realFilters: readonly GpuErrorType[] = NO_FILTERS;
  /** Whether the open segment's real scopes were pushed (at its first replayed command). */
  private realPushed = false;
  /** Errors of the open segment that no real scope catches: our own checks' and the device's uncaptured ones, in order. */
  private synthetic: GpuErrorJson[] = [];
  /** Resolves after every closed segment's errors were dispatched, in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly device: GPUDevice,
    private readonly onUncaptured: (error: GpuErrorJson) => void,
    /** Called for every error of the job's work, captured by one of its scopes or not. */
    private readonly onAnyError: () => void = () => {},
  ) {
    listenForUncaptured(device);
  }

  /**
   * Starts capturing the device's errors for this job. Its real scopes are pushed only when a command
   * of the segment is about to replay (`willReplay`): a segment with no work (a pop right after a push,
   * an iteration mark) then never waits for Dawn to hand back scopes that could have caught nothing.
   */
  openSegment(): void {
    if (this.open) return;
    this.realFilters = NO_FILTERS;
    this.realPushed = false;
    openSegments.set(this.device, this);
    this.open = true;
  }

  /** Call before replaying a command in the open segment: pushes its real scopes the first time. */
  willReplay(): void {
    if (!this.open || this.realPushed) return;
    this.realPushed = true;
    const top = this.top;
    if (!top) return;
    this.realFilters = FILTERS.filter((filter) => top.innermost[filter] !== null);
    for (const filter of this.realFilters) this.device.pushErrorScope(filter);
  }

  /** Adds an error to the current segment: one raised by our own checks, or one the device did not capture. */
  report(error: GpuErrorJson): void {
    this.synthetic.push(error);
  }

  /** Stops capturing; the caught errors are dispatched once Dawn hands them over. */
  closeSegment(): void {
    if (!this.open) return;
    this.open = false;
    if (openSegments.get(this.device) === this) openSegments.delete(this.device);
    const synthetic = this.synthetic;
    // Nothing to hand over: no real scope was pushed and nothing was reported.
    if (this.realFilters.length === 0 && synthetic.length === 0) return;
    const types = [...this.realFilters].reverse();
    const popped = types.map(() => this.device.popErrorScope());
    this.synthetic = [];
    const top = this.top;
    this.chain = this.chain.then(async () => {
      const real = await Promise.all(popped.map((p) => p.catch(() => null)));
      for (const error of synthetic) this.dispatch(error, top);
      real.forEach((error, i) => { if (error) this.dispatch({ type: types[i], message: error.message }, top); });
    }).catch(() => {
      // Delivering failed (the job is gone); later segments must still be dispatched.
    });
  }

  /** The job's pushErrorScope (call between segments). */
  push(filter: GpuErrorType): void {
    const below = this.top;
    const scope: VirtualScope = {
      filter, error: null, below,
      innermost: {
        validation: below?.innermost.validation ?? null,
        'out-of-memory': below?.innermost['out-of-memory'] ?? null,
        internal: below?.innermost.internal ?? null,
      },
    };
    (scope.innermost as Record<GpuErrorType, VirtualScope | null>)[filter] = scope;
    this.top = scope;
    this.depthCount++;
  }

  /** Scopes pushed and not popped. */
  get depth(): number {
    return this.depthCount;
  }

  /**
   * The job's popErrorScope (call between segments): resolves with the scope's
   * first error once every earlier segment is dispatched; rejects on an empty stack.
   */
  pop(): Promise<GpuErrorJson | null> {
    const scope = this.top;
    if (!scope) return Promise.reject(new Error('popErrorScope: the error scope stack is empty'));
    this.top = scope.below;
    this.depthCount--;
    return this.chain.then(() => scope.error);
  }

  /** Resolves once every segment so far is dispatched. */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Hands an error of a segment to the innermost scope of its type on that segment's stack, else to the job. */
  private dispatch(error: GpuErrorJson, top: VirtualScope | null): void {
    this.onAnyError();
    const scope = top?.innermost[error.type] ?? null;
    if (!scope) this.onUncaptured(error);
    else if (!scope.error) scope.error = error;
  }
}
