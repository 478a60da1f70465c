/**
 * The memory map: the GPU's capacity as one bar, exactly as the ledger has it.
 * Persistent memory per job (in the job's colour), each lane's reservation
 * (with the part its buffer pool really holds, and a stripe in the colour of
 * the job iterating in it now), then free space. Hover or focus a segment for
 * its bytes; widths animate as the ledger moves. The bar and each segment carry
 * the ledger's exact figures as data attributes (`data-bytes`, `data-used-bytes`,
 * …) so tests and scripts can check the picture against `salus memory --json`.
 */
import { useMemo, useState, type CSSProperties, type ReactElement } from 'react';
import { jobColor } from '../colors.js';
import { formatBytes, formatBytesExact, formatPercent } from '../format.js';
import { usePanel } from '../store/hooks.js';
import type { JobInfo, LaneInfo, MemoryMap } from '../../../core/protocol/state.js';
import { axisTicks, layoutMemory, type Segment } from './memoryLayout.js';

/** Segments narrower than this share of the bar carry no label (hover or focus still tells). */
const LABEL_MIN_SHARE = 0.065;

/** An axis label without trailing zeros: `"2 GiB"`, `"2.5 GiB"`. */
function formatTick(bytes: number): string {
  return formatBytes(bytes).replace(/(\.\d*?)0+ /, '$1 ').replace(/\. /, ' ');
}

function describe(segment: Segment, jobsById: Record<string, JobInfo>): string {
  const amount = `${formatBytes(segment.bytes)} (${formatBytesExact(segment.bytes)}), ${formatPercent(segment.share)} of the GPU`;
  if (segment.kind === 'persistent') return `${segment.label}: persistent memory ${amount}`;
  if (segment.kind === 'free') return `Free: ${amount}`;
  const running = segment.runningJobId ? jobsById[segment.runningJobId]?.name ?? segment.runningJobId : 'nothing';
  return `${segment.label}: reserved ${amount}; pooled ${formatBytes(segment.pooledBytes ?? 0)}; running ${running}`;
}

function Tooltip({ segment, center, jobsById }: { segment: Segment; center: number; jobsById: Record<string, JobInfo> }): ReactElement {
  const running = segment.runningJobId ? jobsById[segment.runningJobId]?.name ?? segment.runningJobId : null;
  return (
    <div className="memory-tooltip" role="tooltip" style={{ left: `${Math.min(88, Math.max(12, center * 100))}%` }}>
      <div className="tooltip-title">
        {segment.color ? <span className="job-swatch" style={{ background: segment.color }} aria-hidden="true" /> : null}
        {segment.kind === 'persistent' ? `${segment.label} · persistent` : segment.kind === 'lane' ? `${segment.label} · lane` : 'Free'}
      </div>
      <div className="tooltip-bytes">{formatBytes(segment.bytes)} <span className="muted">{formatPercent(segment.share)}</span></div>
      <div className="tooltip-exact">{formatBytesExact(segment.bytes)}</div>
      {segment.kind === 'lane' ? (
        <div className="tooltip-extra">
          pooled {formatBytes(segment.pooledBytes ?? 0)} · {running ? `running ${running}` : 'idle'}
        </div>
      ) : null}
    </div>
  );
}

function LaneCard({ lane, jobsById }: { lane: LaneInfo; jobsById: Record<string, JobInfo> }): ReactElement {
  const pooledShare = lane.sizeBytes > 0 ? lane.pooledBytes / lane.sizeBytes : 0;
  const runningName = lane.running ? jobsById[lane.running]?.name ?? lane.running : null;
  return (
    <li className="lane-card">
      <div className="lane-card-head">
        <span className="lane-id">{lane.id}</span>
        <span className="lane-size" title={formatBytesExact(lane.sizeBytes)}>{formatBytes(lane.sizeBytes)}</span>
      </div>
      <div className="lane-pool" title={`Pooled ${formatBytesExact(lane.pooledBytes)} of ${formatBytesExact(lane.sizeBytes)}`}>
        <div className="lane-pool-fill" style={{ transform: `scaleX(${pooledShare})` }} />
      </div>
      <div className="lane-card-line muted">
        pooled {formatBytes(lane.pooledBytes)} · {lane.jobs.length} {lane.jobs.length === 1 ? 'job' : 'jobs'}
      </div>
      <div className="lane-card-line lane-running">
        {lane.running ? (
          <>
            <span className="job-swatch" style={{ background: jobColor(lane.running) }} aria-hidden="true" />
            <span className="truncate">running <strong>{runningName}</strong></span>
          </>
        ) : <span className="muted">idle</span>}
      </div>
    </li>
  );
}

/** The memory card; shows a placeholder until the first memory map arrives. */
type OneMap = Omit<MemoryMap, 'gpus'>;

/** One GPU's bar: a segment per job's persistent memory and per lane, free space, an axis, and a tooltip on hover. */
function MemoryBar({ memory, jobsById, label }: { memory: OneMap; jobsById: Record<string, JobInfo>; label: string }): ReactElement {
  const [hovered, setHovered] = useState<string | null>(null);
  const segments = useMemo(() => layoutMemory(memory, jobsById), [memory, jobsById]);
  let start = 0;
  const centers = new Map<string, number>();
  for (const segment of segments) {
    centers.set(segment.key, start + segment.share / 2);
    start += segment.share;
  }
  const active = segments.find((segment) => segment.key === hovered) ?? null;
  return (
    <div className="memory-bar-wrap">
      <div
        className="memory-bar"
        role="list"
        aria-label={`${label}: ${formatBytes(memory.usedBytes)} of ${formatBytes(memory.capacityBytes)} used`}
        data-capacity-bytes={memory.capacityBytes}
        data-used-bytes={memory.usedBytes}
        data-free-bytes={memory.freeBytes}
        onMouseLeave={() => setHovered(null)}
      >
        {segments.map((segment) => (
          <div
            key={segment.key}
            role="listitem"
            tabIndex={0}
            className={`segment segment-${segment.kind}${hovered === segment.key ? ' active' : ''}`}
            style={{ width: `${segment.share * 100}%`, '--segment-color': segment.color ?? undefined, '--segment-ink': segment.ink ?? undefined } as CSSProperties}
            data-key={segment.key}
            data-kind={segment.kind}
            data-bytes={segment.bytes}
            data-pooled-bytes={segment.kind === 'lane' ? segment.pooledBytes : undefined}
            data-running={segment.runningJobId ?? undefined}
            aria-label={describe(segment, jobsById)}
            onMouseEnter={() => setHovered(segment.key)}
            onFocus={() => setHovered(segment.key)}
            onBlur={() => setHovered((key) => (key === segment.key ? null : key))}
          >
            {segment.kind === 'lane' ? (
              <>
                <div className="segment-pool" style={{ transform: `scaleX(${segment.bytes > 0 ? (segment.pooledBytes ?? 0) / segment.bytes : 0})` }} />
                {segment.color ? <div className="segment-running" aria-hidden="true" /> : null}
              </>
            ) : null}
            {segment.share >= LABEL_MIN_SHARE ? (
              <span className="segment-label" aria-hidden="true">
                {segment.label} <span className="segment-bytes">{formatBytes(segment.bytes)}</span>
              </span>
            ) : null}
          </div>
        ))}
      </div>
      {active ? <Tooltip segment={active} center={centers.get(active.key) ?? 0.5} jobsById={jobsById} /> : null}
      <div className="memory-axis" aria-hidden="true">
        {axisTicks(memory.capacityBytes).map((tick) => (
          <span key={tick} style={{ left: `${(tick / Math.max(memory.capacityBytes, 1)) * 100}%` }}>{formatTick(tick)}</span>
        ))}
      </div>
    </div>
  );
}

/** The memory map: the totals, then one bar per GPU (each named, when there are several), then the lanes. */
export function MemoryMap(): ReactElement {
  const memory = usePanel((state) => state.memory);
  const jobsById = usePanel((state) => state.jobsById);
  const busyByGpu = usePanel((state) => state.busyShareByGpu);

  if (!memory) {
    return (
      <section className="card memory-card" aria-labelledby="memory-title">
        <header className="card-header"><h2 id="memory-title">GPU memory</h2></header>
        <p className="empty">Waiting for the service’s memory map…</p>
      </section>
    );
  }

  const persistentBytes = memory.jobs.reduce((sum, entry) => sum + entry.persistentBytes, 0);
  // Of the persistent bytes, the jobs' textures (shown when there are any).
  const textureBytes = memory.jobs.reduce((sum, entry) => sum + (entry.textureBytes ?? 0), 0);
  const laneBytes = memory.lanes.reduce((sum, lane) => sum + lane.sizeBytes, 0);
  const gpus = memory.gpus && memory.gpus.length > 1 ? memory.gpus : null;
  // Compiled pipelines the service keeps for later jobs (host memory: not part of the bar).
  const kept = memory.keptPipelines;

  return (
    <section className="card memory-card" aria-labelledby="memory-title">
      <header className="card-header">
        <h2 id="memory-title">{gpus ? `GPU memory · ${gpus.length} GPUs` : 'GPU memory'}</h2>
        <dl className="memory-summary">
          <div title={formatBytesExact(persistentBytes)}><dt>Persistent</dt><dd>{formatBytes(persistentBytes)}</dd></div>
          {textureBytes > 0 && (
            <div title={`${formatBytesExact(textureBytes)} of the persistent memory`}><dt>Textures</dt><dd>{formatBytes(textureBytes)}</dd></div>
          )}
          <div title={formatBytesExact(laneBytes)}><dt>Lanes</dt><dd>{formatBytes(laneBytes)}</dd></div>
          <div title={formatBytesExact(memory.usedBytes)}><dt>Used</dt><dd>{formatBytes(memory.usedBytes)}</dd></div>
          <div title={formatBytesExact(memory.freeBytes)}><dt>Free</dt><dd>{formatBytes(memory.freeBytes)}</dd></div>
          <div title={`${formatBytesExact(memory.capacityBytes)}, from ${memory.capacitySource}`}>
            <dt>Capacity</dt><dd>{formatBytes(memory.capacityBytes)} <span className="muted">({memory.capacitySource})</span></dd>
          </div>
          {kept && kept.count > 0 && (
            <div title={`Compiled pipelines of ended jobs, kept in the service's memory for later jobs of the same program; ${kept.reused} handed out so far`}>
              <dt>Pipelines kept</dt><dd>{kept.count}</dd>
            </div>
          )}
        </dl>
      </header>
      {gpus ? (
        <ul className="gpu-rows" aria-label="GPUs">
          {gpus.map((gpu) => (
            <li key={gpu.id} className="gpu-row" data-gpu={gpu.id}>
              <div className="gpu-row-head">
                <span className="gpu-id">{gpu.id}</span>
                <span className="gpu-name" title={gpu.name}>{gpu.name}</span>
                <span className="gpu-use muted" title={`${formatBytesExact(gpu.usedBytes)} of ${formatBytesExact(gpu.capacityBytes)}`}>
                  {formatBytes(gpu.usedBytes)} of {formatBytes(gpu.capacityBytes)} · {gpu.jobs.length} job{gpu.jobs.length === 1 ? '' : 's'}
                  {busyByGpu[gpu.id] === undefined ? null : ` · busy ${formatPercent(busyByGpu[gpu.id])}`}
                </span>
              </div>
              <MemoryBar memory={gpu} jobsById={jobsById} label={`Memory map of ${gpu.id}`} />
            </li>
          ))}
        </ul>
      ) : <MemoryBar memory={memory} jobsById={jobsById} label="Memory map" />}
      {memory.lanes.length > 0 ? (
        <ul className="lane-cards" aria-label="Lanes">
          {memory.lanes.map((lane) => <LaneCard key={lane.id} lane={lane} jobsById={jobsById} />)}
        </ul>
      ) : <p className="empty">No lanes open.</p>}
    </section>
  );
}
