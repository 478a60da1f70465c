/** Service metrics: how busy the GPU's lanes are, and the Prometheus text of the state. */
import type { ServiceSnapshot } from '../protocol/state.js';

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

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The state in Prometheus's text exposition format (for `/metrics`). */
export function prometheusText(snapshot: ServiceSnapshot): string {
  const lines: string[] = [];
  const metric = (name: string, help: string, type: 'gauge' | 'counter', samples: Array<[string, number]>) => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) lines.push(`${name}${labels} ${value}`);
  };
  const { memory, jobs } = snapshot;
  metric('salus_memory_capacity_bytes', 'GPU memory the service may use.', 'gauge', [['', memory.capacityBytes]]);
  metric('salus_memory_used_bytes', 'Persistent memory of all jobs plus all lane reservations.', 'gauge', [['', memory.usedBytes]]);
  metric('salus_lanes', 'Lanes open now.', 'gauge', [['', memory.lanes.length]]);
  metric('salus_gpu_busy_ratio', 'Share of the last second during which some lane ran an iteration.', 'gauge', [['', snapshot.busyShare]]);
  const states = ['queued', 'running', 'paused', 'done', 'failed', 'killed'];
  metric('salus_jobs', 'Jobs by state.', 'gauge', states.map((s) => [`{state="${s}"}`, jobs.filter((j) => j.state === s).length]));
  const live = jobs.filter((j) => j.state === 'running' || j.state === 'paused');
  const label = (j: (typeof jobs)[number]) => `{job="${escapeLabel(j.id)}",name="${escapeLabel(j.name)}"}`;
  metric('salus_job_iterations_total', 'Iterations finished by the job.', 'counter', live.map((j) => [label(j), j.iterations.done]));
  metric('salus_job_persistent_bytes', 'Persistent memory the job holds.', 'gauge', live.map((j) => [label(j), j.memory.persistentBytes]));
  metric('salus_job_attained_seconds_total', 'GPU time granted to the job.', 'counter', live.map((j) => [label(j), j.attainedMs / 1000]));
  return `${lines.join('\n')}\n`;
}
