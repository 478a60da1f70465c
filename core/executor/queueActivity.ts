/**
 * Answers an awaited `onSubmittedWorkDone` at once when its device's queue has nothing to wait for.
 *
 * Asking Dawn costs the service a native call, a promise, a poll of the instance and a
 * microtask hop (~30 µs of an idle call's round trip, profiled): wasted when the queue
 * is known idle. The queue is known idle when an earlier `onSubmittedWorkDone` of the
 * same device resolved and no queue operation (submit, writeBuffer, writeTexture,
 * copyExternalImageToTexture) ran in this process since it was asked: that promise
 * covered everything the device had queued. Operations are counted process-wide, on
 * `GPUQueue.prototype`, so every caller (replay, the iteration timer, paging, rings) is
 * counted without knowing of this module; any device's work rules out the shortcut,
 * which keeps it simple and errs on the side of asking Dawn.
 *
 * A job's other GPU promises must not be overtaken (a mapAsync asked before the call
 * resolves before it in WebGPU's order): the shortcut also needs dawn.node to have no
 * pending promise at all (`dawnIdle`). Without `countQueueWork` installed (local
 * devices, in-process tests) every call asks Dawn.
 */
import { dawnIdle, pollDawnSoon } from './dawnPolling.js';

const QUEUE_METHODS = ['submit', 'writeBuffer', 'writeTexture', 'copyExternalImageToTexture'] as const;

/** Queue operations this process started, on any device. */
let queueOps = 0;
let counting = false;
/** Per device: `queueOps` when an onSubmittedWorkDone that has since resolved was asked. */
const idleAt = new WeakMap<GPUDevice, number>();

/**
 * Counts queue operations on `queuePrototype` (this process's `GPUQueue.prototype`); once: later calls change
 * nothing. The returned function puts the original methods back (tests).
 */
export function countQueueWork(queuePrototype: GPUQueue | undefined = globalThis.GPUQueue?.prototype): () => void {
  if (counting || !queuePrototype) return () => undefined;
  const methods = queuePrototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = new Map<string, (...args: unknown[]) => unknown>();
  for (const name of QUEUE_METHODS) {
    const original = methods[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    methods[name] = function counted(this: GPUQueue, ...args: unknown[]) {
      queueOps++;
      return original.apply(this, args);
    };
  }
  counting = true;
  // Work from before goes uncounted: no answer asked before now shows a device idle.
  queueOps++;
  return () => {
    for (const [name, original] of originals) methods[name] = original;
    counting = false;
  };
}

/** Whether `device`'s queue is known to hold no work and no GPU promise is pending (see the top of this file). */
function knownIdle(device: GPUDevice): boolean {
  return counting && idleAt.get(device) === queueOps && dawnIdle();
}

/**
 * Calls `done` once all work `device` queued so far is done (synchronously when that is known already),
 * or `failed` with Dawn's error. A job awaits this: Dawn's held poll runs as soon as the current work ends.
 */
export function whenQueueDone(device: GPUDevice, done: () => void, failed: (error: Error) => void): void {
  if (knownIdle(device)) {
    done();
    return;
  }
  const askedAt = counting ? queueOps : -1;
  device.queue.onSubmittedWorkDone().then(() => {
    if (askedAt > (idleAt.get(device) ?? -1)) idleAt.set(device, askedAt);
    done();
  }, failed);
  pollDawnSoon();
}
