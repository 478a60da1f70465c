/**
 * Byte sizes as people type and read them: `--memory 12GiB`, "1.50 GiB" in the panel.
 */

const KiB = 1024;

/** Multipliers by lower-cased unit. Binary units (and their one-letter forms) are powers of 1024; KB/MB/GB/TB are decimal. */
const UNIT_BYTES: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: KiB,
  kib: KiB,
  m: KiB ** 2,
  mib: KiB ** 2,
  g: KiB ** 3,
  gib: KiB ** 3,
  t: KiB ** 4,
  tib: KiB ** 4,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};

const SIZE_PATTERN = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$/i;

const EXPECTED_FORM =
  'expected a size such as 4096, 512MiB, 1.5GiB or 8GB (units B, KiB, MiB, GiB, TiB; KB, MB, GB, TB are powers of 1000)';

/**
 * Parses a size into whole bytes (rounded to the nearest byte).
 *
 * Accepts a plain number of bytes or a number followed by a unit, with or without
 * a space, case-insensitive: B, KiB, MiB, GiB, TiB (powers of 1024; K, M, G, T mean
 * the same), and KB, MB, GB, TB (powers of 1000). Fractions are allowed: `1.5GiB`.
 * A finite, non-negative number is accepted as bytes as it is.
 *
 * @throws Error whose message quotes the input and says what form is expected.
 */
export function parseSize(text: string | number): number {
  if (typeof text === 'number') {
    if (Number.isFinite(text) && text >= 0) return Math.round(text);
    throw new Error(`invalid size ${String(text)}: ${EXPECTED_FORM}`);
  }
  const match = SIZE_PATTERN.exec(String(text));
  const multiplier = match ? UNIT_BYTES[match[2].toLowerCase()] : undefined;
  if (!match || multiplier === undefined) {
    throw new Error(`invalid size ${JSON.stringify(text)}: ${EXPECTED_FORM}`);
  }
  const bytes = Math.round(Number(match[1]) * multiplier);
  if (!Number.isSafeInteger(bytes)) {
    throw new Error(`invalid size ${JSON.stringify(text)}: too large; ${EXPECTED_FORM}`);
  }
  return bytes;
}

const FORMAT_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/**
 * Formats bytes with the largest binary unit that keeps the number at least 1:
 * whole numbers without decimals ("512 MiB", "0 B"), others with two ("1.50 GiB").
 * Negative values keep their sign ("-1 KiB"); non-finite values print as they are.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return `${bytes} B`;
  const sign = bytes < 0 ? '-' : '';
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= KiB && unit < FORMAT_UNITS.length - 1) {
    value /= KiB;
    unit += 1;
  }
  if (unit === 0) return `${sign}${Math.round(value)} B`;
  const text = Number.isInteger(value) ? String(value) : value.toFixed(2);
  // toFixed can round up to the next unit's threshold, e.g. 1023.999 KiB -> "1024.00".
  if (text === '1024.00' && unit < FORMAT_UNITS.length - 1) return `${sign}1.00 ${FORMAT_UNITS[unit + 1]}`;
  return `${sign}${text} ${FORMAT_UNITS[unit]}`;
}
