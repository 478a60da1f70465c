/**
 * A streaming uPlot chart fed from the store outside React: after mounting,
 * React never renders it again. A store subscription schedules at most one
 * redraw per animation frame when `metricsVersion` moves; the chart is rebuilt
 * only when its set of series changes or the theme flips, and resized in place.
 */
import { useEffect, useRef, type ReactElement } from 'react';
import uPlot from 'uplot';
import { usePanelStore } from '../store/hooks.js';
import type { PanelState } from '../store/panelStore.js';
import type { ChartSpec, ChartTheme } from './chartSpecs.js';

const clock = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

function readTheme(element: Element): ChartTheme {
  const style = getComputedStyle(element);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read('--text-muted', '#6b7280'),
    grid: read('--chart-grid', 'rgba(128,128,128,0.15)'),
    accent: read('--accent', '#2563eb'),
    accentFill: read('--accent-fill', 'rgba(37,99,235,0.15)'),
    queue: read('--chart-queue', '#d97706'),
  };
}

interface Layout {
  width: number;
  height: number;
  showTime: boolean;
}

interface Pointer {
  /** Data index under the cursor, or null when the cursor is away. */
  onCursor(index: number | null): void;
  /** Series the cursor is nearest to (1-based), or null for none. */
  onFocus(series: number | null): void;
}

/** Time-axis steps, in seconds. */
const TIME_INCRS_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];

function options(spec: ChartSpec, state: PanelState, theme: ChartTheme, layout: Layout, pointer: Pointer): uPlot.Options {
  const axis = (values: uPlot.Axis['values']): uPlot.Axis => ({
    stroke: theme.text,
    grid: { stroke: theme.grid, width: 1 },
    ticks: { show: false },
    font: '10px system-ui, sans-serif',
    size: 22,
    gap: 3,
    values,
  });
  return {
    width: layout.width,
    height: layout.height,
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { size: 6 }, focus: { prox: 12 } },
    focus: { alpha: 0.35 },
    scales: {
      x: { time: true },
      y: spec.yRange ? { range: spec.yRange }
        : spec.yLog ? { distr: 3, log: 10 }
          : { range: (_u, _min, max) => [0, max <= 1 ? 1 : Math.ceil(max * 1.15)] },
    },
    axes: [
      // Whole seconds at least: the labels have no finer unit, and uPlot's sub-second
      // steps (for a chart a second or two old) would print the same time twice.
      { ...axis((_u, splits) => splits.map((seconds) => clock.format(seconds * 1000))), space: 64, show: layout.showTime, incrs: TIME_INCRS_SECONDS },
      { ...axis((_u, splits) => splits.map((value) => spec.formatY(value))), size: 36, space: 16, incrs: spec.yIncrs },
    ],
    series: [{}, ...spec.series(state, theme)],
    hooks: {
      setCursor: [(u) => pointer.onCursor(u.cursor.idx ?? null)],
      setSeries: [(_u, series, opts) => {
        if ((opts as { focus?: boolean }).focus !== undefined) pointer.onFocus(series);
      }],
    },
  };
}

/** What to plot and how big. */
export interface TimeSeriesChartProps {
  spec: ChartSpec;
  title: string;
  /** Plot height in pixels. */
  height?: number;
  /** Whether to draw the time axis (stacked charts show it once, at the bottom). */
  showTime?: boolean;
}

/** A titled chart whose caption shows the latest value (or the hovered one). */
export function TimeSeriesChart({ spec, title, height = 80, showTime = true }: TimeSeriesChartProps): ReactElement {
  const store = usePanelStore();
  const plotRef = useRef<HTMLDivElement>(null);
  const readoutRef = useRef<HTMLSpanElement>(null);

  useEffect(() => {
    const element = plotRef.current;
    if (!element) return;
    let chart: uPlot | null = null;
    let seriesKey = '';
    let frame = 0;
    let hovered: number | null = null;
    let focused: number | null = null;

    const showReadout = () => {
      if (readoutRef.current) readoutRef.current.textContent = spec.readout(store.getState(), hovered, hovered === null ? null : focused);
    };
    const pointer: Pointer = {
      onCursor(index) {
        hovered = index;
        showReadout();
      },
      onFocus(series) {
        focused = series;
        showReadout();
      },
    };
    const build = () => {
      chart?.destroy();
      const state = store.getState();
      seriesKey = spec.seriesKey(state);
      focused = null;
      const width = Math.max(120, element.clientWidth);
      chart = new uPlot(options(spec, state, readTheme(element), { width, height, showTime }, pointer), spec.data(state), element);
      showReadout();
    };
    const draw = () => {
      frame = 0;
      const state = store.getState();
      if (spec.seriesKey(state) !== seriesKey) build();
      else chart?.setData(spec.data(state));
      showReadout();
    };

    build();
    const unsubscribe = store.subscribe((state, previous) => {
      if (state.metricsVersion !== previous.metricsVersion && !frame) frame = requestAnimationFrame(draw);
    });
    const resize = new ResizeObserver(() => {
      if (chart && Math.abs(chart.width - element.clientWidth) > 1) chart.setSize({ width: Math.max(120, element.clientWidth), height });
    });
    resize.observe(element);
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    scheme.addEventListener('change', build);

    return () => {
      cancelAnimationFrame(frame);
      unsubscribe();
      resize.disconnect();
      scheme.removeEventListener('change', build);
      chart?.destroy();
    };
  }, [store, spec, height, showTime]);

  return (
    <figure className="chart">
      <figcaption>
        <span className="chart-title">{title}</span>
        <span ref={readoutRef} className="chart-readout" />
      </figcaption>
      <div ref={plotRef} className="chart-plot" role="img" aria-label={`${title} over the last minute`} />
    </figure>
  );
}
