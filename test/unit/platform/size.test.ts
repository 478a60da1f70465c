import { describe, expect, test } from 'vitest';
import { formatBytes, parseSize } from '../../../core/platform/size.js';

describe('parseSize', () => {
  test.each([
    ['0', 0],
    ['4096', 4096],
    ['512B', 512],
    ['1KiB', 1024],
    ['512 MiB', 512 * 1024 ** 2],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['2tib', 2 * 1024 ** 4],
    ['8g', 8 * 1024 ** 3],
    ['1KB', 1000],
    ['1.5 GB', 1.5e9],
    ['3mb', 3e6],
    ['  .5KiB ', 512],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseSize(text)).toBe(bytes);
  });

  test('rounds fractional bytes to the nearest byte', () => {
    expect(parseSize('1.0001KiB')).toBe(1024);
  });

  test.each(['', 'lots', '-1GiB', '1.5 GiBs', '1e9', 'GiB', '1 2 MiB', '0x10'])('%j is refused with the expected form', (text) => {
    expect(() => parseSize(text)).toThrow(/expected a size such as .*GiB/);
  });

  test('the error quotes the input', () => {
    expect(() => parseSize('12 parsecs')).toThrow('"12 parsecs"');
  });

  test('a non-negative number passes through, a negative one throws', () => {
    expect(parseSize(2048)).toBe(2048);
    expect(() => parseSize(-1)).toThrow(/invalid size -1/);
    expect(() => parseSize(Number.NaN)).toThrow(/invalid size/);
  });

  test('sizes past what a double holds exactly are refused', () => {
    expect(() => parseSize('99999999 TiB')).toThrow(/too large/);
  });
});

describe('formatBytes', () => {
  test.each([
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1 KiB'],
    [1536, '1.50 KiB'],
    [512 * 1024 ** 2, '512 MiB'],
    [1.5 * 1024 ** 3, '1.50 GiB'],
    [4 * 1024 ** 3, '4 GiB'],
    [3 * 1024 ** 4, '3 TiB'],
    [-2048, '-2 KiB'],
    [1024 ** 2 - 1, '1.00 MiB'],
  ])('%d is %s', (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  test('round-trips through parseSize for whole units', () => {
    for (const bytes of [0, 768, 5 * 1024, 300 * 1024 ** 2, 12 * 1024 ** 3]) {
      expect(parseSize(formatBytes(bytes).replace(' ', ''))).toBe(bytes);
    }
  });
});
