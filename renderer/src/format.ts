/**
 * Number formatting for the panel: binary byte units, durations and rates.
 * Every function is pure and locale-stable (en-US digits), so tests and
 * screenshots read the same everywhere.
 */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;
const grouped = new Intl.NumberFormat('en-US');

/** `1536` → `"1.5 KiB"`; three significant digits, binary units as the CLI prints them. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '—';
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${bytes < 0 ? '-' : ''}${value.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

/** `1073741824` → `"1,073,741,824 bytes"`: the ledger's exact figure. */
export function formatBytesExact(bytes: number): string {
  return `${grouped.format(bytes)} ${bytes === 1 ? 'byte' : 'bytes'}`;
}

/** Groups digits: `4210` → `"4,210"`. */
export function formatCount(value: number): string {
  return grouped.format(value);
}

/** An iteration time: `"0.42 ms"`, `"18.3 ms"`, `"1.25 s"`; `"—"` when unknown. */
export function formatIterationMs(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** A span of time, two units at most: `"45 s"`, `"3 min 20 s"`, `"2 h 5 min"`, `"1 d 3 h"`. */
export function formatDuration(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return seconds % 60 ? `${minutes} min ${seconds % 60} s` : `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** A share in 0..1 as a percentage: `0.734` → `"73%"`. */
export function formatPercent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** A clock time for a timestamp in epoch milliseconds, `"14:03:27"`; `"—"` for null. */
export function formatClock(at: number | null): string {
  if (at === null) return '—';
  return new Date(at).toLocaleTimeString('en-GB', { hour12: false });
}
