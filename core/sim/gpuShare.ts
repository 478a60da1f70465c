/**
 * How iterations of different lanes share the simulated GPU. With k iterations
 * running at once the GPU delivers min(k, maxSpeedup) iterations' worth of work, so
 * each progresses at min(k, maxSpeedup) / k of its full speed (processor sharing):
 * maxSpeedup 1 means lanes only take turns on the GPU (no gain from packing),
 * Infinity means every lane runs as if it had the GPU to itself.
 */
import type { Clock, TimerHandle } from '../scheduler/clock.js';

interface Running {
  /** Work left, in milliseconds at full speed. */
  remainingMs: number;
  startedAtMs: number;
  timer: TimerHandle;
  onDone: (elapsedMs: number) => void;
}

/** Runs iterations on a shared GPU in virtual time. */
export interface GpuShare {
  /** Starts an iteration of `workMs` at full speed; `onDone` hears its elapsed time when it ends. */
  start(key: object, workMs: number, onDone: (elapsedMs: number) => void): void;
}

/** A shared GPU on `clock`; `maxSpeedup` ≥ 1 (Infinity: no contention). */
export function createGpuShare(clock: Clock, maxSpeedup: number): GpuShare {
  if (!(maxSpeedup >= 1)) throw new Error(`the GPU's speedup from running lanes side by side must be 1 or more, got ${maxSpeedup}`);
  const running = new Map<object, Running>();
  let lastChangeMs = clock.now();
  let rate = 1;

  const rateFor = (count: number) => (count <= maxSpeedup ? 1 : maxSpeedup / count);

  /** Books the work done since the last change at the old rate, then re-times every end at the new one. */
  function change(update: () => void): void {
    const nowMs = clock.now();
    for (const iteration of running.values()) iteration.remainingMs = Math.max(0, iteration.remainingMs - (nowMs - lastChangeMs) * rate);
    lastChangeMs = nowMs;
    update();
    const next = rateFor(running.size);
    if (next === rate) return;
    rate = next;
    for (const [key, iteration] of running) {
      clock.clearTimeout(iteration.timer);
      iteration.timer = clock.setTimeout(() => finish(key), iteration.remainingMs / rate);
    }
  }

  function finish(key: object): void {
    const iteration = running.get(key)!;
    change(() => running.delete(key));
    iteration.onDone(clock.now() - iteration.startedAtMs);
  }

  return {
    start(key, workMs, onDone) {
      change(() => {
        running.set(key, { remainingMs: workMs, startedAtMs: clock.now(), timer: null, onDone });
      });
      const iteration = running.get(key)!;
      // change() re-timed the others only if the rate moved; this one needs its timer either way.
      if (iteration.timer === null) iteration.timer = clock.setTimeout(() => finish(key), workMs / rate);
    },
  };
}
