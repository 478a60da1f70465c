/**
 * Summaries for noisy samples: medians and 90th percentiles over repeats, and
 * ratios of medians. The machine is shared, so the bench compares side by side
 * measurements of one run, never absolute numbers across runs.
 */

/** A sample set in milliseconds (or any unit), summarized. */
export interface Summary {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

/** The q-quantile (0..1) by linear interpolation between order statistics; NaN when empty. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

/** The arithmetic mean; NaN when empty. */
export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((sum, v) => sum + v, 0) / values.length : NaN;
}

/** The median (the 0.5-quantile); NaN when empty. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Median, p90, min and max of `values`. */
export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    median: quantile(values, 0.5),
    p90: quantile(values, 0.9),
    min: values.length ? Math.min(...values) : NaN,
    max: values.length ? Math.max(...values) : NaN,
  };
}

/** Consecutive differences: per-iteration times from iteration end stamps. */
export function diffs(stamps: readonly number[]): number[] {
  return stamps.slice(1).map((t, i) => t - stamps[i]);
}

/** Rounds for the JSON file: 3 significant decimals are plenty for milliseconds. */
export function round(value: number, digits = 3): number {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : value;
}

/** `a / b` rounded, or null when it means nothing (either not finite, or `b` not above 0). */
export function ratio(a: number, b: number, digits = 2): number | null {
  return Number.isFinite(a) && Number.isFinite(b) && b > 0 ? round(a / b, digits) : null;
}

/** A summary with its numbers rounded. */
export function rounded(summary: Summary): Summary {
  return {
    n: summary.n,
    median: round(summary.median),
    p90: round(summary.p90),
    min: round(summary.min),
    max: round(summary.max),
  };
}
