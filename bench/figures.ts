/**
 * The evaluation's figures as small, dependency-free SVG files (docs/*.svg): a
 * CDF per series (JCT per policy, request latency) and lines over time (memory).
 * Plain strings in, a self-contained SVG document out; text is escaped, axes get
 * round ticks, series get fixed colours in order.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A named set of values (CDF) or points (line chart). */
export interface Series {
  label: string;
  values?: readonly number[];
  points?: readonly (readonly [number, number])[];
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  /** A vertical marker, e.g. a latency SLO. */
  marker?: { x: number; label: string };
}

const HEIGHT = 360;
const PAD = { left: 64, right: 150, top: 36, bottom: 48 };
/** The plot area's width; the figure widens to the right for its legend's longest label. */
const PLOT_WIDTH = 426;
/** Room a legend character takes at font-size 12 (a generous sans-serif average), and the legend's swatch before it. */
const LEGEND_CHAR_PX = 7;
const LEGEND_SWATCH_PX = 38;

/** The figure's width: the plot, and a legend column wide enough for its longest label (never clipped). */
export function figureWidth(labels: readonly string[]): number {
  const longest = Math.max(0, ...labels.map((label) => label.length));
  return PAD.left + PLOT_WIDTH + Math.max(PAD.right, LEGEND_SWATCH_PX + longest * LEGEND_CHAR_PX + 8);
}
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** About five round tick values from at or below `low` to at or above `high` (steps of 1, 2 or 5 × a power of ten). */
export function niceTicks(low: number, high: number, count = 5): number[] {
  if (!(high > low)) return [low];
  const raw = (high - low) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  const first = Math.floor(low / step + 1e-9);
  const last = Math.ceil(high / step - 1e-9);
  return Array.from({ length: last - first + 1 }, (_, i) => Number(((first + i) * step).toPrecision(12)));
}

/** The points of the empirical CDF of `values`: a step up of 1/n at each sorted value. */
export function cdfPoints(values: readonly number[]): [number, number][] {
  const sorted = [...values].sort((a, b) => a - b);
  const points: [number, number][] = [];
  sorted.forEach((v, i) => {
    points.push([v, i / sorted.length], [v, (i + 1) / sorted.length]);
  });
  return points;
}

const tickText = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : String(Number(v.toPrecision(3))));

/** A line chart of the series' points (or of their values' CDFs for `cdfChart`). */
export function lineChart(spec: ChartSpec): string {
  const all = spec.series.flatMap((s) => s.points ?? []);
  const xs = [...all.map((p) => p[0]), ...(spec.marker ? [spec.marker.x] : [])];
  const ys = all.map((p) => p[1]);
  const xTicks = niceTicks(Math.min(0, ...xs), Math.max(1e-9, ...xs));
  const yTicks = niceTicks(Math.min(0, ...ys), Math.max(1e-9, ...ys));
  const [x0, x1] = [xTicks[0], xTicks[xTicks.length - 1]];
  const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1]];
  const WIDTH = figureWidth(spec.series.map((s) => s.label));
  const plotW = PLOT_WIDTH;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const sx = (x: number) => PAD.left + ((x - x0) / (x1 - x0 || 1)) * plotW;
  const sy = (y: number) => PAD.top + plotH - ((y - y0) / (y1 - y0 || 1)) * plotH;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${PAD.left}" y="22" font-size="14" font-weight="bold">${escapeXml(spec.title)}</text>`,
  ];
  for (const t of xTicks) {
    out.push(`<line x1="${sx(t).toFixed(1)}" y1="${PAD.top}" x2="${sx(t).toFixed(1)}" y2="${PAD.top + plotH}" stroke="#e5e5e5"/>`,
      `<text x="${sx(t).toFixed(1)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${tickText(t)}</text>`);
  }
  for (const t of yTicks) {
    out.push(`<line x1="${PAD.left}" y1="${sy(t).toFixed(1)}" x2="${PAD.left + plotW}" y2="${sy(t).toFixed(1)}" stroke="#e5e5e5"/>`,
      `<text x="${PAD.left - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${tickText(t)}</text>`);
  }
  out.push(`<rect x="${PAD.left}" y="${PAD.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    `<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`,
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`);
  if (spec.marker) {
    const x = sx(spec.marker.x).toFixed(1);
    out.push(`<line x1="${x}" y1="${PAD.top}" x2="${x}" y2="${PAD.top + plotH}" stroke="#555" stroke-dasharray="4 3"/>`,
      // Inside the plot, at the foot of the line: above it the label would run into the title.
      `<text x="${(sx(spec.marker.x) + 4).toFixed(1)}" y="${PAD.top + plotH - 6}" fill="#555">${escapeXml(spec.marker.label)}</text>`);
  }
  spec.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const points = s.points ?? [];
    if (points.length) {
      out.push(`<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')}"/>`);
    }
    const ly = PAD.top + 12 + i * 18;
    const legendX = PAD.left + plotW;
    out.push(`<line x1="${legendX + 12}" y1="${ly - 4}" x2="${legendX + 32}" y2="${ly - 4}" stroke="${colour}" stroke-width="3"/>`,
      `<text x="${legendX + 38}" y="${ly}">${escapeXml(s.label)}</text>`);
  });
  out.push('</svg>', '');
  return out.join('\n');
}

/** The empirical CDF of each series' values, y from 0 to 1. */
export function cdfChart(spec: ChartSpec): string {
  return lineChart({ ...spec, series: spec.series.map((s) => ({ label: s.label, points: cdfPoints(s.values ?? []) })) });
}

/** Writes `svg` to `path`, creating its folder. */
export function writeFigure(path: string, svg: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, svg);
}
