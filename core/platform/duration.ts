/** Durations as people write them: `90s`, `30m`, `2h`, `7d`, `1w`, `1h30m`. */

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Milliseconds in a DURATION such as `90s`, `30m`, `2h`, `7d`, `1w` or `1h30m`; throws saying what is wanted. */
export function parseDurationMs(text: string): number {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)\s*([smhdw])/gy)];
  const consumed = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || consumed.replace(/\s/g, '') !== text.replace(/\s/g, '')) {
    throw new Error(`'${text}' is not a duration: write e.g. 90s, 30m, 2h, 7d, 1w or 1h30m`);
  }
  return parts.reduce((sum, [, value, unit]) => sum + Number(value) * UNIT_MS[unit], 0);
}
