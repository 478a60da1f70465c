/**
 * Retakes the panel's screenshots in docs/ from a real `salus serve --http`
 * running real jobs (steps.js at four sizes under PACK, the fourth queued for
 * want of memory, one launched through the panel's own launch sheet so its
 * drawer has output). Not part of `npm test`; run it after `npm run build`:
 *
 *     npx vitest run --config test/e2e/screenshots/vitest.config.ts
 *
 * `SHOTS_SETTLE_MS` (default 45 s) is how long the jobs run before the main
 * shots, so the activity charts have a history. Look at the results before
 * committing them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { chromium } from 'playwright-core';
import { ROOT, startService, type JobProcess } from '../../helpers/service.js';
import { makeTwinSwiftShader } from '../../../bench/twinGpu.js';
import { until } from '../../helpers/rawSocket.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const STEPS = join(ROOT, 'test', 'fixtures', 'jobs', 'steps.js');
const DOCS = join(ROOT, 'docs');
const SETTLE_MS = Number(process.env.SHOTS_SETTLE_MS ?? 45_000);
const MiB = 1024 * 1024;

/** steps.js's arguments for a job of `persistentMiB` weights and `ephemeralMiB` scratch per iteration. */
function stepsArgs(iterations: number, persistentMiB: number, ephemeralMiB: number): string[] {
  return ['--iterations', String(iterations), '--work', '8', '--persistent', String(persistentMiB * MiB), '--ephemeral', String(ephemeralMiB * MiB)];
}

/** `salus run` arguments for such a job, its sizes declared as hints. */
function run(name: string, iterations: number, persistentMiB: number, ephemeralMiB: number): string[] {
  return ['--name', name, '--iterations', String(iterations), '--persistent', `${persistentMiB}MiB`, '--ephemeral', `${ephemeralMiB}MiB`,
    STEPS, '--', ...stepsArgs(iterations, persistentMiB, ephemeralMiB)];
}

it('takes the panel screenshots', async () => {
  const service = await startService(['--http', '127.0.0.1:0', '--memory', '160MiB', '--policy', 'PACK']);
  const jobs: JobProcess[] = [];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    let url = '';
    for (let i = 0; i < 100 && !url; i += 1) {
      url = /salus: panel at (\S+)/.exec(service.log())?.[1] ?? '';
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    jobs.push(service.startJob(run('resnet-tiny', 600, 40, 12)));
    jobs.push(service.startJob(run('bert-mini', 800, 24, 8)));
    await service.waitForJobs((all) => all.filter((j) => j.state === 'running' && j.iterations.done >= 2).length === 2, 60_000);

    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
    const errors: string[] = [];
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()); });
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(url);
    await page.getByText('Connected', { exact: true }).waitFor();
    await page.waitForTimeout(5000); // a few seconds of charts behind the sheet

    // The third job comes through the launch sheet, as a dropped file.
    await page.evaluate(({ name, text }) => {
      const win = globalThis as any;
      const transfer = new win.DataTransfer();
      transfer.items.add(new win.File([text], name, { type: 'text/javascript' }));
      for (const type of ['dragenter', 'dragover', 'drop']) {
        win.document.body.dispatchEvent(new win.DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
      }
    }, { name: 'steps.js', text: readFileSync(STEPS, 'utf8') });
    const sheet = page.getByRole('dialog', { name: 'Launch a job' });
    await sheet.getByRole('textbox', { name: 'Name' }).fill('mlp-sweep-3');
    await sheet.getByRole('spinbutton', { name: 'Iterations' }).fill('2000');
    await sheet.getByRole('textbox', { name: 'Arguments' }).fill(stepsArgs(2000, 8, 4).join(' '));
    await page.screenshot({ path: join(DOCS, 'panel-launch.png') });
    await sheet.getByRole('button', { name: 'Launch', exact: true }).click();
    await sheet.waitFor({ state: 'detached', timeout: 30_000 });
    await page.getByRole('button', { name: 'Close details' }).click();

    // The fourth does not fit beside them in 160 MiB: it waits in the queue.
    jobs.push(service.startJob(run('gan-small', 500, 72, 12)));
    await service.waitForJobs((all) => all.some((j) => j.name === 'gan-small' && j.state === 'queued'));
    await page.waitForTimeout(SETTLE_MS);
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(DOCS, 'panel.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(1500);
    await page.screenshot({ path: join(DOCS, 'panel-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });

    await page.getByRole('button', { name: 'Details of mlp-sweep-3' }).click();
    await page.getByLabel('Job output').getByText(/"step"/).waitFor({ timeout: 20_000 });
    await page.screenshot({ path: join(DOCS, 'panel-drawer.png') });
    await page.getByRole('button', { name: 'Close details' }).click();

    const lane = page.getByRole('listitem', { name: /^lane-1: reserved/ });
    await lane.hover();
    await page.getByRole('tooltip').waitFor();
    const card = page.locator('.memory-card');
    await card.screenshot({ path: join(DOCS, 'panel-memory-hover.png') });

    expect(errors).toEqual([]);
  } finally {
    for (const job of jobs) job.child.kill('SIGTERM');
    await browser.close();
    await service.stop();
  }
}, 240_000);

it('takes the two-GPU screenshot (docs/panel-gpus.png)', async () => {
  const twin = makeTwinSwiftShader();
  if ('reason' in twin) throw new Error(`no second software GPU: ${twin.reason}`);
  const service = await startService(['--http', '127.0.0.1:0', '--gpus', 'all', '--memory', '64MiB', '--policy', 'FAIR'], twin.env);
  const jobs: JobProcess[] = [];
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const url = (await until(() => /salus: panel at (\S+)/.exec(service.log()), 'the panel URL'))[1];
    // Two 40 MiB jobs (one per GPU), a small one beside the first, and a third 40 MiB one waiting for room.
    jobs.push(service.startJob(run('resnet-tiny', 3000, 40, 4)));
    jobs.push(service.startJob(run('bert-mini', 3000, 40, 4)));
    jobs.push(service.startJob(run('mlp-small', 3000, 8, 2)));
    await service.waitForJobs((all) => all.filter((j) => j.state === 'running' && j.iterations.done >= 2).length === 3, 60_000);
    jobs.push(service.startJob(run('gan-small', 500, 40, 4)));
    await service.waitForJobs((all) => all.some((j) => j.name === 'gan-small' && j.state === 'queued'));
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: 'light' });
    await page.goto(url);
    await page.getByText('Connected', { exact: true }).waitFor();
    await page.locator('.gpu-row').nth(1).waitFor();
    await page.waitForTimeout(Math.min(SETTLE_MS, 10_000));
    await page.screenshot({ path: join(DOCS, 'panel-gpus.png') });
    expect(await page.locator('.gpu-row').count()).toBe(2);
  } finally {
    for (const job of jobs) job.child.kill('SIGTERM');
    await browser.close();
    await service.stop();
    twin.remove();
  }
}, 240_000);
