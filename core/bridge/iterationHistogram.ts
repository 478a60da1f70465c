/**
 * `salus_job_iteration_duration_seconds`: a Prometheus histogram per job whose
 * labels are read when scraped. prom-client's own Histogram fixes a series'
 * labels at observation time, so a job's iterations would stay under
 * `state="running"` after it ended while its other series said `done`; here
 * the buckets are kept per job id and exposed under the job's labels of now,
 * like every other per-job series.
 */
import type { Metric } from 'prom-client';

/** Upper bounds of the buckets, in seconds: 1 ms to 10 s. */
export const ITERATION_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Buckets {
  counts: number[];
  sumSeconds: number;
  count: number;
}

type Labels = Record<string, string>;

/** Counts per job; `labelsOf` names the jobs to expose (and their labels) at each scrape. */
export class IterationHistogram {
  readonly name = 'salus_job_iteration_duration_seconds';
  readonly help = "GPU time of the job's iterations, from grant to finish.";
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly byJob = new Map<string, Buckets>();

  constructor(private readonly labelsOf: () => Map<string, Labels>) {}

  /** Counts one iteration of `jobId` that took `seconds`. */
  observe(jobId: string, seconds: number): void {
    let buckets = this.byJob.get(jobId);
    if (!buckets) {
      buckets = { counts: ITERATION_BUCKETS_SECONDS.map(() => 0), sumSeconds: 0, count: 0 };
      this.byJob.set(jobId, buckets);
    }
    ITERATION_BUCKETS_SECONDS.forEach((bound, i) => {
      if (seconds <= bound) buckets.counts[i] += 1;
    });
    buckets.sumSeconds += seconds;
    buckets.count += 1;
  }

  /** What prom-client's registry formats; drops jobs the service no longer lists. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Array<{ metricName: string; labels: Labels; value: number }> }> {
    const labels = this.labelsOf();
    const values: Array<{ metricName: string; labels: Labels; value: number }> = [];
    for (const [jobId, buckets] of this.byJob) {
      const jobLabels = labels.get(jobId);
      if (!jobLabels) {
        this.byJob.delete(jobId);
        continue;
      }
      ITERATION_BUCKETS_SECONDS.forEach((bound, i) => {
        values.push({ metricName: `${this.name}_bucket`, labels: { ...jobLabels, le: String(bound) }, value: buckets.counts[i] });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...jobLabels, le: '+Inf' }, value: buckets.count });
      values.push({ metricName: `${this.name}_sum`, labels: jobLabels, value: buckets.sumSeconds });
      values.push({ metricName: `${this.name}_count`, labels: jobLabels, value: buckets.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** For the registry's interface: forgets every observation. */
  reset(): void {
    this.byJob.clear();
  }

  /** This object as the registry's type (it formats anything with `get()`). */
  asMetric(): Metric {
    return this as unknown as Metric;
  }
}
