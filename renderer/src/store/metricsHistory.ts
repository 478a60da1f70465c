/**
 * A fixed-size ring buffer of the service's `metrics` events, stored as columns
 * (typed arrays) so the charts can redraw from it many times a second without
 * allocating per sample. It is mutable on purpose and lives outside React: the
 * store bumps `metricsVersion` after each push, and the charts, subscribed to
 * the store, read the columns when that number moves.
 */

/** One `metrics` event, as the charts need it. */
export interface MetricsSample {
  /** Epoch milliseconds. */
  at: number;
  /** Share of the window during which some lane ran an iteration, 0..1. */
  busyShare: number;
  /** Jobs waiting for admission or for their lane. */
  queueLength: number;
  /** Iterations per second, by job id; jobs absent from a sample ran none. */
  iterationsPerSecond: Record<string, number>;
  /** Each GPU's busy share, by id, where the service has several. */
  busyShareByGpu?: Record<string, number>;
}

/** Columns oldest-first, in the units uPlot takes (x in epoch seconds). */
export interface MetricsColumns {
  timeSeconds: number[];
  busyShare: number[];
  queueLength: number[];
}

/** The charts' ring buffer; see the module comment for how it is shared. */
export class MetricsHistory {
  /** Samples kept; the oldest is overwritten past this. */
  readonly capacity: number;
  private readonly at: Float64Array;
  private readonly busy: Float64Array;
  private readonly queue: Float64Array;
  /** Per job: its rate at each slot, NaN where the job was absent. */
  private readonly perJob = new Map<string, Float64Array>();
  /** Per job: the `pushed` count when it last appeared, to drop it once it scrolls out. */
  private readonly lastSeen = new Map<string, number>();
  private pushed = 0;

  constructor(capacity = 600) {
    if (!Number.isInteger(capacity) || capacity < 2) throw new RangeError(`capacity must be an integer ≥ 2, got ${capacity}`);
    this.capacity = capacity;
    this.at = new Float64Array(capacity);
    this.busy = new Float64Array(capacity);
    this.queue = new Float64Array(capacity);
  }

  /** Samples held now, at most `capacity`. */
  get length(): number {
    return Math.min(this.pushed, this.capacity);
  }

  /** Appends a sample, overwriting the oldest when full. */
  push(sample: MetricsSample): void {
    const slot = this.pushed % this.capacity;
    this.at[slot] = sample.at;
    this.busy[slot] = sample.busyShare;
    this.queue[slot] = sample.queueLength;
    for (const [jobId, rates] of this.perJob) {
      if (!(jobId in sample.iterationsPerSecond)) rates[slot] = Number.NaN;
    }
    for (const [jobId, rate] of Object.entries(sample.iterationsPerSecond)) {
      let rates = this.perJob.get(jobId);
      if (!rates) {
        rates = new Float64Array(this.capacity).fill(Number.NaN);
        this.perJob.set(jobId, rates);
      }
      rates[slot] = rate;
      this.lastSeen.set(jobId, this.pushed);
    }
    this.pushed += 1;
    for (const [jobId, seenAt] of this.lastSeen) {
      if (this.pushed - seenAt > this.capacity) {
        this.lastSeen.delete(jobId);
        this.perJob.delete(jobId);
      }
    }
  }

  /** The newest sample's time, busy share and queue length, or null when empty. */
  latest(): { at: number; busyShare: number; queueLength: number } | null {
    if (this.pushed === 0) return null;
    const slot = (this.pushed - 1) % this.capacity;
    return { at: this.at[slot], busyShare: this.busy[slot], queueLength: this.queue[slot] };
  }

  /** Time, busy share and queue length, oldest first. */
  columns(): MetricsColumns {
    return {
      timeSeconds: this.read(this.at).map((ms) => ms / 1000),
      busyShare: this.read(this.busy),
      queueLength: this.read(this.queue),
    };
  }

  /** Jobs with at least one sample in the window, in order of first appearance. */
  jobIds(): string[] {
    return [...this.perJob.keys()];
  }

  /**
   * A job's iterations per second, oldest first, null where it was absent (uPlot
   * draws a gap). With `averageOver` > 1, each point is the mean of that many
   * samples up to it (those where the job was present): the service counts whole
   * iterations per one-second window, so a job at 0.7 it/s reads 0, 1, 1, 0, 1…
   * sample by sample, and only an average shows its rate.
   */
  jobSeries(jobId: string, averageOver = 1): Array<number | null> {
    const rates = this.perJob.get(jobId);
    if (!rates) return new Array<null>(this.length).fill(null);
    const raw = this.read(rates);
    return raw.map((rate, index) => {
      if (Number.isNaN(rate)) return null;
      let sum = 0;
      let count = 0;
      for (let j = Math.max(0, index - averageOver + 1); j <= index; j += 1) {
        if (Number.isNaN(raw[j])) continue;
        sum += raw[j];
        count += 1;
      }
      return sum / count;
    });
  }

  /** Forgets every sample. */
  clear(): void {
    this.pushed = 0;
    this.perJob.clear();
    this.lastSeen.clear();
  }

  private read(column: Float64Array): number[] {
    const length = this.length;
    const start = this.pushed > this.capacity ? this.pushed % this.capacity : 0;
    const out = new Array<number>(length);
    for (let i = 0; i < length; i += 1) out[i] = column[(start + i) % this.capacity];
    return out;
  }
}
