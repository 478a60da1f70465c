/**
 * Error scopes for one job on a shared device.
 *
 * The device's real scope stack is shared by every job, so a job's own
 * push/pop cannot go to it directly. Instead the job's commands are replayed in
 * *segments* (split at each push/pop the job makes), each wrapped in real
 * scopes for the three error kinds; the errors a segment catches are then
 * dispatched to the job's virtual stack as it was during that segment: to the
 * innermost scope whose filter matches (which keeps only its first error), else
 * to the job as an uncaptured error. A segment never spans an `await`, so other
 * jobs' segments nest cleanly inside the device's stack.
 */
import type { GpuErrorJson, GpuErrorType } from '../protocol/commands.js';

interface VirtualScope {
  filter: GpuErrorType;
  error: GpuErrorJson | null;
}

const FILTERS: GpuErrorType[] = ['internal', 'out-of-memory', 'validation'];

export class ErrorScopes {
  private stack: VirtualScope[] = [];
  private open = false;
  private synthetic: GpuErrorJson[] = [];
  /** Resolves after every closed segment's errors were dispatched, in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly device: GPUDevice,
    private readonly onUncaptured: (error: GpuErrorJson) => void,
    /** Called for every error of the job's work, captured by one of its scopes or not. */
    private readonly onAnyError: () => void = () => {},
  ) {}

  /** Starts capturing the device's errors for this job. */
  openSegment(): void {
    if (this.open) return;
    for (const filter of FILTERS) this.device.pushErrorScope(filter);
    this.open = true;
  }

  /** Adds an error raised by our own checks to the current segment. */
  report(error: GpuErrorJson): void {
    this.synthetic.push(error);
  }

  /** Stops capturing; the caught errors are dispatched once Dawn hands them over. */
  closeSegment(): void {
    if (!this.open) return;
    this.open = false;
    const popped = [...FILTERS].reverse().map(() => this.device.popErrorScope());
    const synthetic = this.synthetic;
    this.synthetic = [];
    const scopes = [...this.stack];
    this.chain = this.chain.then(async () => {
      const real = await Promise.all(popped.map((p) => p.catch(() => null)));
      const errors: GpuErrorJson[] = [...synthetic];
      // popped is in validation, out-of-memory, internal order.
      const types: GpuErrorType[] = ['validation', 'out-of-memory', 'internal'];
      real.forEach((error, i) => { if (error) errors.push({ type: types[i], message: error.message }); });
      for (const error of errors) this.dispatch(error, scopes);
    }).catch(() => {
      // Delivering failed (the job is gone); later segments must still be dispatched.
    });
  }

  /** The job's pushErrorScope (call between segments). */
  push(filter: GpuErrorType): void {
    this.stack.push({ filter, error: null });
  }

  /**
   * The job's popErrorScope (call between segments): resolves with the scope's
   * first error once every earlier segment is dispatched; rejects on an empty stack.
   */
  pop(): Promise<GpuErrorJson | null> {
    const scope = this.stack.pop();
    if (!scope) return Promise.reject(new Error('popErrorScope: the error scope stack is empty'));
    return this.chain.then(() => scope.error);
  }

  /** Resolves once every segment so far is dispatched. */
  settled(): Promise<void> {
    return this.chain;
  }

  private dispatch(error: GpuErrorJson, scopes: VirtualScope[]): void {
    this.onAnyError();
    for (let i = scopes.length - 1; i >= 0; i--) {
      if (scopes[i].filter === error.type) {
        if (!scopes[i].error) scopes[i].error = error;
        return;
      }
    }
    this.onUncaptured(error);
  }
}
