// The app icons: the SVG sources and every PNG size electron-builder takes,
// each a real RGBA PNG of the size its name says.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ICONS = resolve(import.meta.dirname, '../../../assets/icons');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('assets/icons', () => {
  it.each(['salus.svg', 'salus-small.svg'])('%s is an SVG with a viewBox', (name) => {
    const svg = readFileSync(join(ICONS, name), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 \d+ \d+">/);
  });

  it.each([16, 32, 64, 128, 256, 512, 1024])('the %i px PNG is an RGBA PNG of that size', (size) => {
    const png = readFileSync(join(ICONS, 'png', `${size}x${size}.png`));
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(png.toString('ascii', 12, 16)).toBe('IHDR');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([size, size]);
    expect(png[24]).toBe(8); // bit depth
    expect(png[25]).toBe(6); // colour type: RGBA, so the corners stay transparent
  });
});
