/**
 * Error scopes for one job on a shared device.
 *
 * The device's real scope stack is shared by every job, so a job's own
 * push/pop cannot go to it directly. Instead the job's commands are replayed in
 * *segments* (split at each push/pop the job makes), and every error raised
 * while a segment is open is that segment's: it goes to the job's virtual stack
 * as it was during that segment, to the innermost scope whose filter matches
 * (which keeps only its first error), else to the job as an uncaptured error,
 * every one of them, as on a local device.
 *
 * No real scope is pushed for a segment. Dawn raises an error that no real
 * scope catches as the device's `uncapturederror`, synchronously, inside the
 * call that made it (dawn.node dispatches the event before that call returns;
 * test/unit/executor/errorScopes.test.ts holds it to that), and a segment never
 * spans an `await`, so the event arrives while the job's segment is the open
 * one. A real scope pushed around the segment would catch exactly the same
 * errors, since it too sees only those raised between its push and its pop, but
 * its pop is a promise Dawn settles on a later poll of the instance: every
 * segment of a job inside a scope (ONNX Runtime wraps each run in one) would
 * keep dawn.node polling, and the job's own pop would wait a turn of the
 * service's event loop for it. So a job's pop is answered from its virtual
 * stack as soon as the segments before it close.
 *
 * What the service itself does on the device while a job's segment is open (a
 * lane's pool allocating for the job) is the job's, as when real scopes wrapped
 * the segment; work that is not (the iteration timer's) runs outside segments
 * or inside a real scope of its own.
 *
 * Cost: a job may push any number of scopes (WebGPU sets no limit; the CTS
 * pushes 100,000), and every push and pop splits a segment. So the virtual stack
 * is a persistent linked list whose nodes know the innermost scope of each
 * filter at or below them: a segment keeps its stack as one pointer, and opening,
 * closing and dispatching cost O(1) in the stack's depth — never a copy of it.
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

/** The segment open on each shared device: the owner of an error raised now. */
const openSegments = new WeakMap<GPUDevice, ErrorScopes>();
const listened = new WeakSet<GPUDevice>();
/** Errors each shared device has raised so far, whoever owned them (see `deviceErrorCount`). */
const errorCounts = new WeakMap<GPUDevice, number>();

/**
 * How many errors `device` has raised since a session first listened to it. Dawn raises an error inside the
 * call that made it (see above), so a count unchanged across a call says that call raised none.
 */
export function deviceErrorCount(device: GPUDevice): number {
  return errorCounts.get(device) ?? 0;
}

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
    errorCounts.set(device, (errorCounts.get(device) ?? 0) + 1);
    const owner = openSegments.get(device);
    if (!owner) return;
    event.preventDefault();
    owner.report({ type: errorType(error), message: error.message });
  });
}

/**
 * Runs `work`, the service's own GPU work (the iteration timer's), so that no job's open segment claims an
 * error it raises: such an error is the service's, and goes the default way (dawn.node prints it).
 */
export function asServiceWork<T>(device: GPUDevice, work: () => T): T {
  const owner = openSegments.get(device);
  if (!owner) return work();
  openSegments.delete(device);
  try {
    return work();
  } finally {
    openSegments.set(device, owner);
  }
}

export class ErrorScopes {
  /** The top of the job's virtual stack (null when empty). */
  private top: VirtualScope | null = null;
  private depthCount = 0;
  private open = false;
  /** Errors of the open segment: our own checks' and the device's, in order. */
  private errors: GpuErrorJson[] = [];

  constructor(
    private readonly device: GPUDevice,
    private readonly onUncaptured: (error: GpuErrorJson) => void,
    /** Called for every error of the job's work, captured by one of its scopes or not. */
    private readonly onAnyError: () => void = () => {},
  ) {
    listenForUncaptured(device);
  }

  /** Starts capturing the device's errors for this job (see the top of this file). */
  openSegment(): void {
    if (this.open) return;
    openSegments.set(this.device, this);
    this.open = true;
  }

  /** Adds an error to the current segment: one raised by our own checks, or one the device raised. */
  report(error: GpuErrorJson): void {
    this.errors.push(error);
  }

  /** Stops capturing, and hands the segment's errors to the job's scopes (or to the job) now. */
  closeSegment(): void {
    if (!this.open) return;
    this.open = false;
    if (openSegments.get(this.device) === this) openSegments.delete(this.device);
    if (this.errors.length === 0) return;
    const errors = this.errors;
    this.errors = [];
    for (const error of errors) this.dispatch(error, this.top);
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
   * The job's popErrorScope (call between segments, so every earlier segment's errors are dispatched):
   * the scope's first error, or null; throws on an empty stack.
   */
  pop(): GpuErrorJson | null {
    const scope = this.top;
    if (!scope) throw new Error('popErrorScope: the error scope stack is empty');
    this.top = scope.below;
    this.depthCount--;
    return scope.error;
  }

  /** Hands an error of a segment to the innermost scope of its type on that segment's stack, else to the job. */
  private dispatch(error: GpuErrorJson, top: VirtualScope | null): void {
    this.onAnyError();
    const scope = top?.innermost[error.type] ?? null;
    if (!scope) this.onUncaptured(error);
    else if (!scope.error) scope.error = error;
  }
}
