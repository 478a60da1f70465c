/**
 * The job queue: a filterable, sortable table of every job, virtualized so
 * hundreds of rows cost what a screenful does. Rows are absolutely placed by
 * @tanstack/react-virtual inside one scrolling body; the header stays put.
 */
import { useRef, type ReactElement } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { countByState, selectMultiGpu, selectVisibleJobIds } from '../store/jobView.js';
import { usePanel, usePanelShallow } from '../store/hooks.js';
import type { JobSortKey, JobStateFilter } from '../store/uiSlice.js';
import { JobRow, ROW_HEIGHT } from './JobRow.js';

interface Column {
  label: string;
  className: string;
  sortKey: JobSortKey | null;
}

const COLUMNS: Column[] = [
  { label: 'State', className: 'col-state', sortKey: 'state' },
  { label: 'Job', className: 'col-name', sortKey: 'name' },
  { label: 'Priority', className: 'col-priority', sortKey: 'priority' },
  { label: 'Progress', className: 'col-progress', sortKey: 'progress' },
  { label: 'Iteration', className: 'col-num', sortKey: 'avgIteration' },
  { label: 'Persistent', className: 'col-num', sortKey: 'persistent' },
  { label: 'Ephemeral', className: 'col-num', sortKey: 'ephemeral' },
  { label: 'GPU', className: 'col-lane col-gpu', sortKey: 'gpu' },
  { label: 'Lane', className: 'col-lane', sortKey: 'lane' },
  { label: 'Actions', className: 'col-actions', sortKey: null },
];

const STATE_FILTERS: Array<{ value: JobStateFilter; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'active', label: 'Active' },
  { value: 'running', label: 'Running' },
  { value: 'paused', label: 'Paused' },
  { value: 'queued', label: 'Queued' },
  { value: 'finished', label: 'Finished' },
  { value: 'done', label: 'Done' },
  { value: 'failed', label: 'Failed' },
  { value: 'killed', label: 'Killed' },
];

function Toolbar(): ReactElement {
  const filter = usePanel((state) => state.filter);
  const setFilter = usePanel((state) => state.setFilter);
  const counts = usePanelShallow((state) => countByState(state.jobs));
  const total = usePanel((state) => state.jobs.length);
  const countOf = (value: JobStateFilter): number => {
    if (value === 'all') return total;
    if (value === 'active') return counts.queued + counts.running + counts.paused;
    if (value === 'finished') return counts.done + counts.failed + counts.killed;
    return counts[value];
  };
  return (
    <div className="card-tools">
      <input
        type="search"
        className="search"
        placeholder="Filter by name or id"
        aria-label="Filter jobs by name or id"
        value={filter.text}
        onChange={(event) => setFilter({ text: event.target.value })}
      />
      <select aria-label="Show jobs" value={filter.state} onChange={(event) => setFilter({ state: event.target.value as JobStateFilter })}>
        {STATE_FILTERS.map(({ value, label }) => (
          <option key={value} value={value}>{`${label} (${countOf(value)})`}</option>
        ))}
      </select>
    </div>
  );
}

/** The queue card: title, filter, sortable header and the virtualized rows. */
export function JobQueue(): ReactElement {
  const ids = usePanelShallow(selectVisibleJobIds);
  const total = usePanel((state) => state.jobs.length);
  const sort = usePanel((state) => state.sort);
  const setSort = usePanel((state) => state.setSort);
  const scrollRef = useRef<HTMLDivElement>(null);
  // The GPU column shows only when the service shares several GPUs.
  const multiGpu = usePanel(selectMultiGpu);
  const columns = multiGpu ? COLUMNS : COLUMNS.filter((column) => column.sortKey !== 'gpu');
  const virtualizer = useVirtualizer({
    count: ids.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => ids[index],
    overscan: 8,
  });

  return (
    <section className="card queue-card" aria-labelledby="queue-title">
      <header className="card-header">
        <h2 id="queue-title">Jobs <span className="count">{ids.length === total ? total : `${ids.length} of ${total}`}</span></h2>
        <Toolbar />
      </header>
      <div role="table" aria-labelledby="queue-title" aria-rowcount={ids.length + 1} className={`job-table${multiGpu ? ' multi-gpu' : ''}`}>
        <div role="rowgroup" className="job-head">
          <div role="row" aria-rowindex={1} className="job-row head">
            {columns.map((column) => {
              const active = column.sortKey !== null && sort.key === column.sortKey;
              return (
                <div
                  key={column.label}
                  role="columnheader"
                  className={column.className}
                  aria-sort={active ? (sort.descending ? 'descending' : 'ascending') : undefined}
                >
                  {column.sortKey ? (
                    <button type="button" className={`sort-button${active ? ' active' : ''}`} onClick={() => setSort(column.sortKey!)}>
                      {column.label}
                      <span className="sort-arrow" aria-hidden="true">{active ? (sort.descending ? '↓' : '↑') : ''}</span>
                    </button>
                  ) : <span className="visually-hidden">{column.label}</span>}
                </div>
              );
            })}
          </div>
        </div>
        <div ref={scrollRef} className="job-body" role="rowgroup">
          {ids.length === 0 ? (
            <p className="empty">
              {total === 0 ? 'No jobs yet. Drop a .js or .mjs job file anywhere, or press Launch job.' : 'No jobs match the filter.'}
            </p>
          ) : (
            <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
              {virtualizer.getVirtualItems().map((item) => (
                <JobRow
                  key={item.key}
                  jobId={ids[item.index]}
                  rowIndex={item.index + 2}
                  style={{ position: 'absolute', top: 0, left: 0, right: 0, height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}
                />
              ))}
            </div>
          )}
        </div>
      </div>
    </section>
  );
}
