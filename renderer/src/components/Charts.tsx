/** The activity card: GPU busy share, throughput per job and queue length over the last minute. */
import type { ReactElement } from 'react';
import { busySpec, queueSpec, throughputSpec } from './chartSpecs.js';
import { TimeSeriesChart } from './TimeSeriesChart.js';

/** Three streaming charts; they draw from the metrics ring buffer, never through React state. */
export function Charts(): ReactElement {
  return (
    <section className="card charts-card" aria-labelledby="charts-title">
      <header className="card-header"><h2 id="charts-title">Activity</h2><span className="muted">last minute</span></header>
      <TimeSeriesChart spec={busySpec} title="GPU busy" height={56} showTime={false} />
      <TimeSeriesChart spec={throughputSpec} title="Throughput (10 s avg, log)" height={76} showTime={false} />
      <TimeSeriesChart spec={queueSpec} title="Queue length" height={66} />
    </section>
  );
}
