/**
 * Staying awake across a quick round trip.
 *
 * An idle Node thread sleeps in `epoll_wait`, so the peer's next write has to wake it up. On a virtual
 * machine that wake-up is an interrupt to a halted virtual CPU: measured on a 2-vCPU VM, a raw Node↔Node
 * Unix-socket round trip took 51 µs between two processes that slept between messages and 20 µs when the
 * answering one kept its event loop turning for 50 µs after each answer, at about the same CPU per round
 * trip (sleeping and being woken cost as much as the turns). A job in a loop of awaited calls (an idle
 * `onSubmittedWorkDone`, a small readback) pays that wake-up on every call, on both sides.
 *
 * `QuickTurns` watches one peer's turnarounds: the time from our last message to the peer's next one (the
 * service: from its reply to the job's next request; a job: from its awaited request to the reply). After
 * sending, it keeps this thread's event loop turning for `windowUs` (a chain of `setImmediate`: libuv then
 * polls without blocking; sockets, timers and other immediates are served as usual) when the peer's last
 * turnaround came within `2 × windowUs` (a sleeping thread's turnaround includes its own wake-up). A peer that
 * answers slowly (a job busy between calls, GPU work being waited for) costs nothing: one late turnaround
 * and the next send does not spin. One spin runs per thread, however many peers ask for it.
 */

/** How long to stay awake after sending: past a quick peer's turnaround, far under a slow one's. */
export const QUICK_TURN_WINDOW_US = 50;

let spinUntilMs = 0;
let spinning = false;

/** One turn of the event loop while the window lasts. A named function: core/executor/dawnPolling.ts lets it through. */
function stayAwake(): void {
  if (performance.now() < spinUntilMs) setImmediate(stayAwake);
  else spinning = false;
}

/** Keeps this thread's event loop turning for `windowUs` from now (extending a spin already running). */
export function keepAwake(windowUs: number): void {
  spinUntilMs = Math.max(spinUntilMs, performance.now() + windowUs / 1000);
  if (spinning) return;
  spinning = true;
  setImmediate(stayAwake);
}

/** Whether a spin is running now (for tests and diagnostics). */
export function awake(): boolean {
  return spinning;
}

export class QuickTurns {
  private sentAtMs = -1;
  private quick = false;

  constructor(private readonly windowUs = QUICK_TURN_WINDOW_US) {}

  /** We sent the peer something it answers (a reply the job acts on, a request the service answers): spin if it is quick. */
  sent(): void {
    this.sentAtMs = performance.now();
    if (this.quick) keepAwake(this.windowUs);
  }

  /** The peer sent something: how long after our last `sent()` decides whether the next one spins. */
  received(): void {
    if (this.sentAtMs < 0) return;
    this.quick = performance.now() - this.sentAtMs <= (2 * this.windowUs) / 1000;
    this.sentAtMs = -1;
  }

  /** Whether the next `sent()` keeps the loop awake. */
  get isQuick(): boolean {
    return this.quick;
  }
}
