/**
 * WebGPU's error classes for the job process, as a browser defines them. The job
 * never loads the native binding, so these are ours; `instanceof` works on them.
 */
import type { GpuErrorJson } from '../../protocol/commands.js';

/**
 * Base of the three error kinds that error scopes and `uncapturederror` deliver.
 * As in WebGPU, it cannot be constructed itself, and `message` is a readonly
 * attribute of its prototype.
 */
export class GPUError {
  readonly #message: string;

  constructor(message: string) {
    if (new.target === GPUError) throw new TypeError('Illegal constructor');
    this.#message = String(message);
  }

  get message(): string {
    return this.#message;
  }

  static {
    Object.defineProperty(GPUError.prototype, 'message', { ...Object.getOwnPropertyDescriptor(GPUError.prototype, 'message'), enumerable: true });
  }
}
export class GPUValidationError extends GPUError {}
export class GPUOutOfMemoryError extends GPUError {}
export class GPUInternalError extends GPUError {}

/** Rejection of `createComputePipelineAsync`. */
export class GPUPipelineError extends DOMException {
  readonly reason: 'validation' | 'internal';
  constructor(message = '', options: { reason: 'validation' | 'internal' } = { reason: 'validation' }) {
    super(message, 'GPUPipelineError');
    this.reason = options.reason;
  }
}

/** The event dispatched on a device for an error no scope captured. */
export class GPUUncapturedErrorEvent extends Event {
  readonly error: GPUError;
  constructor(type: string, init: { error: GPUError }) {
    super(type);
    this.error = init.error;
  }
}

/** Rebuilds the right GPUError subclass from its wire form. */
export function gpuErrorFromJson(json: GpuErrorJson): GPUError {
  switch (json.type) {
    case 'out-of-memory':
      return new GPUOutOfMemoryError(json.message);
    case 'internal':
      return new GPUInternalError(json.message);
    default:
      return new GPUValidationError(json.message);
  }
}
