/** How busy the GPU's lanes are (the panel's chart and `salus_gpu_busy_ratio`; see core/bridge/prometheus.ts for /metrics). */

/**
 * Measures the share of wall time during which at least one lane runs an
 * iteration, over the window since the last `sample()`.
 */
export class BusyMeter {
  private readonly running = new Set<string>();
  private busySinceMs: number | null = null;
  private busyMs = 0;
  private windowStartMs = performance.now();
  /** The share measured by the last sample, 0..1. */
  lastShare = 0;

  start(laneId: string): void {
    if (this.running.size === 0) this.busySinceMs = performance.now();
    this.running.add(laneId);
  }

  stop(laneId: string): void {
    if (!this.running.delete(laneId)) return;
    if (this.running.size === 0 && this.busySinceMs !== null) {
      this.busyMs += performance.now() - this.busySinceMs;
      this.busySinceMs = null;
    }
  }

  /** Closes the window and returns its busy share. */
  sample(): number {
    const now = performance.now();
    let busy = this.busyMs;
    if (this.busySinceMs !== null) {
      busy += now - this.busySinceMs;
      this.busySinceMs = now;
    }
    const windowMs = now - this.windowStartMs;
    this.windowStartMs = now;
    this.busyMs = 0;
    this.lastShare = windowMs > 0 ? Math.min(1, busy / windowMs) : 0;
    return this.lastShare;
  }
}
