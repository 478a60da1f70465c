/**
 * S1 (issue 10; paper: average JCT 3.19× better with SRTF than FIFO, on 100
 * jobs): the paper-shaped trace (`assets/traces/paper-100.csv`, made by
 * ./paperTrace.ts) replayed in virtual time by the simulator (core/sim: the
 * service's own scheduler and admission), FIFO against SRTF, with memory
 * unlimited (scheduling alone) and at 16 GiB (the paper's P100, with our
 * admission). What `salus simulate assets/traces/paper-100.csv --policy
 * FIFO,SRTF` prints, as summary rows; needs no service and no GPU, and gives the
 * same figures on every machine. docs/simulator.md has the trace and the model.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../harness.js';
import { secs, times, type BenchResult, type TableRow } from '../report.js';
import { ratio, round } from '../stats.js';
import type { SummaryRow } from '../summary.js';
import { parseTrace } from '../../core/sim/trace.js';
import { simulate } from '../../core/sim/simulator.js';

/** The trace S1 replays. */
export const S1_TRACE = join(ROOT, 'assets', 'traces', 'paper-100.csv');

/** The paper's figure, and issue 10's goal for S1: within 15% of it. */
const PAPER_RATIO = 3.19;
const TARGET = round(PAPER_RATIO * 0.85, 2);

/** The memory sizes S1 runs at: unlimited (its row `S1`), and the paper's GPU (`S1.16GiB`). */
const CAPACITIES: { id: string; what: string; capacityBytes?: number }[] = [
  { id: 'S1', what: 'memory unlimited (scheduling alone)' },
  { id: 'S1.16GiB', what: '--memory 16GiB (the paper\'s P100, with our admission)', capacityBytes: 16 * 2 ** 30 },
];

/** S1: FIFO and SRTF over the trace at each capacity; a summary row each. */
export async function benchSimulated(log: (line: string) => void = () => {}): Promise<BenchResult> {
  const trace = parseTrace(readFileSync(S1_TRACE, 'utf8'), S1_TRACE);
  const runs = CAPACITIES.map(({ id, what, capacityBytes }) => {
    const [fifo, srtf] = (['FIFO', 'SRTF'] as const).map((policy) => simulate(trace, { policy, capacityBytes }));
    const r = ratio(fifo.avgJctMs ?? NaN, srtf.avgJctMs ?? NaN) ?? 0;
    log(`${id}: avg JCT FIFO ${secs(fifo.avgJctMs ?? NaN)}, SRTF ${secs(srtf.avgJctMs ?? NaN)}: ${times(r)}`);
    return { id, what, capacityBytes: capacityBytes ?? null, fifo, srtf, ratio: r };
  });
  const minutes = (ms: number | null) => round((ms ?? NaN) / 60_000, 1);
  const summaryRows: SummaryRow[] = runs.map((run) => ({
    id: run.id, what: `avg JCT of ${trace.length} paper-shaped jobs (${S1_TRACE.slice(ROOT.length + 1)}) simulated, FIFO / SRTF, ${run.what}`,
    ours: minutes(run.srtf.avgJctMs), baseline: minutes(run.fifo.avgJctMs), unit: 'min', ratio: run.ratio, paper: `${PAPER_RATIO}×`,
    ...(run.id === 'S1' ? { target: TARGET } : {}),
  }));
  const rows: TableRow[] = runs.map((run) => ({
    metric: `${run.id} avg JCT FIFO / SRTF (simulated)`, salus: `${minutes(run.srtf.avgJctMs)} min`, reference: `${minutes(run.fifo.avgJctMs)} min`,
    ratio: times(run.ratio), goal: run.id === 'S1' ? `≥${TARGET}` : '', met: run.id === 'S1' ? run.ratio >= TARGET : null,
  }));
  return {
    name: 's1',
    method: `The paper-shaped 100-job trace through the simulator (core/sim), FIFO vs SRTF, memory unlimited and 16 GiB; virtual time, so the figures are the same on every machine. Target: within 15% of the paper's ${PAPER_RATIO}×.`,
    rows,
    summaryRows,
    data: {
      trace: S1_TRACE,
      runs: runs.map((run) => ({
        id: run.id, capacityBytes: run.capacityBytes, ratio: run.ratio,
        fifo: { avgJctMs: run.fifo.avgJctMs, makespanMs: run.fifo.makespanMs, peakLanes: run.fifo.peakLanes },
        srtf: { avgJctMs: run.srtf.avgJctMs, makespanMs: run.srtf.makespanMs, peakLanes: run.srtf.peakLanes },
      })),
    },
  };
}
