/**
 * Virtual time for the simulator: a `Clock` (core/scheduler/clock.ts) whose timers
 * are the simulation's events. Nothing waits in real time; `runNext()` jumps to the
 * earliest timer and runs it, so the real scheduler's hold timers and the
 * simulator's own events (arrivals, iteration ends) share one ordered queue.
 */
import type { Clock } from '../scheduler/clock.js';

interface Timer {
  id: number;
  dueMs: number;
  fn: () => void;
}

/** A `Clock` driven by the simulator rather than by the host. */
export interface VirtualClock extends Clock {
  /** Runs the earliest pending timer (ties: the one set first), with `now()` at its due time. Returns false when none is left. */
  runNext(): boolean;
  /** Timers set and neither run nor cleared. */
  pendingTimers(): number;
}

function earlier(a: Timer, b: Timer): boolean {
  return a.dueMs < b.dueMs || (a.dueMs === b.dueMs && a.id < b.id);
}

/** A virtual clock at `startMs` (0 by default). Timers are kept in a binary heap, so a run of n events costs O(n log n). */
export function createVirtualClock(startMs = 0): VirtualClock {
  let nowMs = startMs;
  let nextId = 1;
  const heap: Timer[] = [];
  /** Ids set and neither run nor cleared. */
  const live = new Set<number>();
  /** Ids cleared while still in the heap; skipped when they surface. */
  const cleared = new Set<number>();

  function push(timer: Timer): void {
    heap.push(timer);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (!earlier(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  function pop(): Timer | undefined {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      for (let i = 0; ;) {
        const left = 2 * i + 1;
        const right = left + 1;
        let best = i;
        if (left < heap.length && earlier(heap[left], heap[best])) best = left;
        if (right < heap.length && earlier(heap[right], heap[best])) best = right;
        if (best === i) break;
        [heap[i], heap[best]] = [heap[best], heap[i]];
        i = best;
      }
    }
    return top;
  }

  return {
    now: () => nowMs,
    setTimeout(fn, ms) {
      const id = nextId++;
      live.add(id);
      // NaN or negative delays run "now", as the system clock's do.
      push({ id, dueMs: nowMs + (ms > 0 ? ms : 0), fn });
      return id;
    },
    clearTimeout(handle) {
      if (live.delete(handle as number)) cleared.add(handle as number);
    },
    runNext() {
      for (let timer = pop(); timer; timer = pop()) {
        if (cleared.delete(timer.id)) continue;
        live.delete(timer.id);
        nowMs = timer.dueMs;
        timer.fn();
        return true;
      }
      return false;
    },
    pendingTimers: () => live.size,
  };
}
