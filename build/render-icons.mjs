#!/usr/bin/env node
// Renders assets/icons/png/<N>x<N>.png from the SVG sources with headless
// Chromium (playwright-core, a devDependency; $CHROMIUM or /usr/bin/chromium):
// salus-small.svg for 16 and 32 px (pixel-grid hinted), salus.svg above.
// electron-builder takes the PNGs from there (build/electron-builder.yml: the
// folder for Linux, 1024 for macOS, 256 for Windows). Run after editing an SVG:
//
//   node build/render-icons.mjs
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const ICON_SIZES = [16, 32, 64, 128, 256, 512, 1024];
const SMALL_UP_TO = 32;

const icons = join(dirname(fileURLToPath(import.meta.url)), '..', 'assets', 'icons');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  mkdirSync(join(icons, 'png'), { recursive: true });
  for (const size of ICON_SIZES) {
    const svg = readFileSync(join(icons, size <= SMALL_UP_TO ? 'salus-small.svg' : 'salus.svg'), 'utf8');
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    await page.setContent(`<!doctype html><style>html,body{margin:0;background:transparent}svg{display:block;width:${size}px;height:${size}px}</style>${svg}`);
    await page.screenshot({ path: join(icons, 'png', `${size}x${size}.png`), omitBackground: true });
    await page.close();
    process.stdout.write(`render-icons: png/${size}x${size}.png\n`);
  }
} finally {
  await browser.close();
}
