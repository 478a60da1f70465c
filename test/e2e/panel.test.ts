/**
 * End to end: the headless panel in Debian's Chromium (playwright-core) against
 * a real `salus serve --http` on a loopback port of its own, running real jobs on
 * the (software) GPU. Checks what a user sees against what the CLI says: the
 * queue, the memory map, the policy and its knobs, drag-and-drop launch and
 * kill; that the page logs no console errors; and the HTTP contract's token
 * rules. Needs `npm run build` (dist/ and dist/renderer) and Chromium.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import WebSocket from 'ws';
import { ROOT, startService, type JobProcess, type TestService } from '../helpers/service.js';
import type { JobInfo, MemoryMap, PolicyInfo } from '../../core/protocol/state.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const STEPS = join(ROOT, 'test', 'fixtures', 'jobs', 'steps.js');
const MiB = 1024 * 1024;

/** steps.js's own arguments: `iterations` of small buffers and cheap kernels. */
function stepsArgs(iterations: number): string[] {
  return ['--iterations', String(iterations), '--work', '8', '--persistent', String(MiB), '--ephemeral', String(256 * 1024)];
}

/** Polls `read` until `accept` holds; fails with the last value seen. */
async function until<T>(what: string, read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < deadline) {
    last = await read();
    if (accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 2000)}`);
}

/** What the page's memory map shows, read from its exact-bytes data attributes. */
interface ShownMemory {
  capacityBytes: number;
  usedBytes: number;
  freeBytes: number;
  segments: Record<string, { bytes: number; pooledBytes: number | null }>;
}

/** Runs in the page (no DOM types here: core's tsconfig has none). */
function readMemoryMap(): ShownMemory | null {
  const doc = (globalThis as any).document;
  const bar = doc.querySelector('[role="list"][data-capacity-bytes]');
  if (!bar) return null;
  const segments: ShownMemory['segments'] = {};
  for (const item of bar.querySelectorAll('[data-key]')) {
    const pooled = item.getAttribute('data-pooled-bytes');
    segments[item.getAttribute('data-key')] = { bytes: Number(item.getAttribute('data-bytes')), pooledBytes: pooled === null ? null : Number(pooled) };
  }
  return {
    capacityBytes: Number(bar.getAttribute('data-capacity-bytes')),
    usedBytes: Number(bar.getAttribute('data-used-bytes')),
    freeBytes: Number(bar.getAttribute('data-free-bytes')),
    segments,
  };
}

/** The memory map as the page should draw `memory`. */
function expectedMemoryMap(memory: MemoryMap): ShownMemory {
  const segments: ShownMemory['segments'] = {};
  for (const job of memory.jobs) if (job.persistentBytes > 0) segments[`job:${job.id}`] = { bytes: job.persistentBytes, pooledBytes: null };
  for (const lane of memory.lanes) segments[`lane:${lane.id}`] = { bytes: lane.sizeBytes, pooledBytes: lane.pooledBytes };
  if (memory.freeBytes > 0) segments.free = { bytes: memory.freeBytes, pooledBytes: null };
  return { capacityBytes: memory.capacityBytes, usedBytes: memory.usedBytes, freeBytes: memory.freeBytes, segments };
}

/** Drops a File named `name` holding `text` on the page, as a drag from the desktop would. */
function dropFile({ name, text }: { name: string; text: string }): void {
  const page = globalThis as any;
  const transfer = new page.DataTransfer();
  transfer.items.add(new page.File([text], name, { type: 'text/javascript' }));
  for (const type of ['dragenter', 'dragover', 'drop']) {
    page.document.body.dispatchEvent(new page.DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}

// Without Chromium this suite cannot run: fail with what to install rather than skip silently.
describe('the headless panel in Chromium, against salus serve --http', () => {
  if (!existsSync(CHROMIUM)) {
    it('needs Chromium', () => {
      throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
    });
    return;
  }
  let service: TestService;
  let browser: Browser;
  let page: Page;
  let panelUrl: URL;
  let token: string;
  const jobs: JobProcess[] = [];
  const pageErrors: string[] = [];

  const jobsJson = () => service.json<JobInfo[]>(['jobs']);
  const memoryJson = () => service.json<MemoryMap>(['memory']);
  const policyJson = () => service.json<PolicyInfo>(['policy']);

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'renderer', 'index.html'))) throw new Error('dist/renderer is missing: run `npm run build` first.');
    service = await startService(['--http', '127.0.0.1:0', '--memory', '64MiB', '--policy', 'FIFO']);
    const printed = await until('the panel URL', async () => /salus: panel at (\S+)/.exec(service.log()), (match) => match !== null, 10_000);
    panelUrl = new URL(printed![1]);
    token = panelUrl.searchParams.get('token')!;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    page.on('console', (message) => { if (message.type() === 'error') pageErrors.push(`console: ${message.text()}`); });
    page.on('pageerror', (error) => pageErrors.push(`pageerror: ${error.message}`));
  }, 60_000);

  afterEach(({ task }) => {
    if (task.result?.state === 'fail' || task.result?.errors?.length) console.error(`salus serve printed:\n${service?.log().slice(-4000)}`);
  });

  afterAll(async () => {
    for (const job of jobs) job.child.kill('SIGTERM');
    await browser?.close();
    await service?.stop();
  });

  it('prints a loopback panel URL, and guards /api, /metrics and the WebSocket with its token', async () => {
    expect(panelUrl.hostname).toBe('127.0.0.1');
    expect(Number(panelUrl.port)).toBeGreaterThan(0);
    expect(token).toMatch(/^\S{16,}$/);
    const base = panelUrl.origin;

    expect((await fetch(`${base}/`)).status).toBe(200); // the panel itself is public
    for (const path of ['/api/jobs', '/api/memory', '/api/policy', '/metrics']) {
      expect((await fetch(`${base}${path}`)).status, `${path} without a token`).toBe(401);
      expect((await fetch(`${base}${path}?token=wrong-${token}`)).status, `${path} with a wrong token`).toBe(401);
      expect((await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).status, `${path} with Bearer`).toBe(200);
      expect((await fetch(`${base}${path}?token=${token}`)).status, `${path} with ?token=`).toBe(200);
    }
    const policy = await (await fetch(`${base}/api/policy?token=${token}`)).json();
    expect(policy).toMatchObject({ name: 'FIFO', params: await policyJson().then((p) => p.params) });

    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toMatch(/^# HELP salus_gpu_memory_total_bytes .+\n# TYPE salus_gpu_memory_total_bytes gauge\nsalus_gpu_memory_total_bytes\{gpu="0"\} 67108864$/m);
    for (const line of text.trimEnd().split('\n').filter((l) => l !== '')) expect(line).toMatch(/^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? -?[\d.e+-]+)$/);

    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`ws://${panelUrl.host}/api/events`);
      ws.on('unexpected-response', (_request, response) => { resolve(response.statusCode ?? 0); ws.terminate(); });
      ws.on('open', () => reject(new Error('the WebSocket opened without a token')));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(401);
    for (const options of [{ url: `ws://${panelUrl.host}/api/events?token=${token}` }, { url: `ws://${panelUrl.host}/api/events`, headers: { authorization: `Bearer ${token}` } }]) {
      const first = await new Promise<any>((resolve, reject) => {
        const ws = new WebSocket(options.url, { headers: options.headers });
        ws.once('message', (data) => { resolve(JSON.parse(String(data))); ws.close(); });
        ws.on('error', reject);
      });
      expect(first.event.type).toBe('snapshot');
    }
  });

  it('shows a job appear and progress', async () => {
    await page.goto(panelUrl.href);
    await page.getByText('Connected', { exact: true }).waitFor();
    // The token leaves the address bar once read, and a reload still connects.
    expect(new URL(page.url()).searchParams.has('token')).toBe(false);
    await page.reload();
    await page.getByText('Connected', { exact: true }).waitFor();
    jobs.push(service.startJob(['--name', 'e2e-train', '--iterations', '100000', '--persistent', '1MiB', '--ephemeral', '256KiB', STEPS, '--', ...stepsArgs(100_000)]));
    const progress = page.getByRole('progressbar', { name: 'Iterations of e2e-train' });
    await progress.waitFor({ timeout: 20_000 });
    const done = async () => Number(await progress.getAttribute('aria-valuenow'));
    const first = await until('e2e-train to iterate in the panel', done, (n) => n > 0);
    await until('the panel to show more iterations', done, (n) => n >= first + 3);
    const [job] = (await jobsJson()).filter((j) => j.name === 'e2e-train');
    expect(job.state).toBe('running');
    expect(job.iterations.done).toBeGreaterThanOrEqual(first + 3);
    await page.getByRole('row').filter({ hasText: 'e2e-train' }).locator('.badge-running').waitFor();
  });

  it('draws the memory map exactly as `salus memory --json` has it', async () => {
    // Both sides move as iterations come and go; a moment where they agree exactly must come.
    let last: { cli: ShownMemory; page: ShownMemory | null } | null = null;
    await until('the map to match the ledger', async () => {
      const cli = expectedMemoryMap(await memoryJson());
      last = { cli, page: await page.evaluate(readMemoryMap) };
      return last;
    }, ({ cli, page: shown }) => JSON.stringify(shown) === JSON.stringify(cli) && Object.keys(cli.segments).some((key) => key.startsWith('lane:')));
    const { cli } = last!;
    const [jobId] = Object.keys(cli.segments).filter((key) => key.startsWith('job:')).map((key) => key.slice(4));
    const persistent = cli.segments[`job:${jobId}`].bytes;
    expect(persistent).toBeGreaterThanOrEqual(MiB);
    expect(cli.capacityBytes).toBe(64 * MiB);
    // The exact figure is also what a screen reader hears.
    await expect(page.getByRole('listitem', { name: new RegExp(`^e2e-train: persistent memory .*\\(${persistent.toLocaleString('en-US')} bytes\\)`) }).count()).resolves.toBe(1);
  });

  it('switches to SRTF from the policy panel', async () => {
    await page.getByRole('radio', { name: /^SRTF/ }).check();
    const policy = await until('salus policy to say SRTF', policyJson, (p) => p.name === 'SRTF');
    expect(policy.knobs.map((k) => k.key)).toContain('holdMs');
    expect(await page.getByRole('radio', { name: /^SRTF/ }).isChecked()).toBe(true);
  });

  it('moves a knob with a keyboard-operated slider', async () => {
    const slider = page.getByRole('slider', { name: 'Hold ms' });
    const before = (await policyJson()).params.holdMs as number;
    await slider.focus();
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('ArrowRight');
    const policy = await until('holdMs to move three steps', policyJson, (p) => p.params.holdMs === before + 30);
    expect(policy.name).toBe('SRTF');
    await until('the slider to show it', async () => Number(await slider.inputValue()), (v) => v === before + 30);
  });

  it('launches a job from a file dropped on the window', async () => {
    await page.evaluate(dropFile, { name: 'steps.js', text: readFileSync(STEPS, 'utf8') });
    const sheet = page.getByRole('dialog', { name: 'Launch a job' });
    await sheet.waitFor();
    await expect(sheet.getByText('steps.js', { exact: true }).count()).resolves.toBe(1);
    await sheet.getByRole('textbox', { name: 'Name' }).fill('dropped-steps');
    // Fewer iterations than e2e-train has left, so SRTF lets it run at once.
    await sheet.getByRole('spinbutton', { name: 'Iterations' }).fill('1000');
    await sheet.getByRole('textbox', { name: 'Arguments' }).fill(stepsArgs(1000).join(' '));
    await sheet.getByRole('button', { name: 'Launch', exact: true }).click();
    await sheet.waitFor({ state: 'detached', timeout: 20_000 });
    const job = await until('salus jobs to list dropped-steps', jobsJson, (all) => all.some((j) => j.name === 'dropped-steps' && j.state === 'running'));
    const dropped = job.find((j) => j.name === 'dropped-steps')!;
    expect(dropped.iterations.total).toBe(1000);
    expect(dropped.pid).toBeGreaterThan(0);
  });

  it('kills a job from the panel, and its memory returns at once', async () => {
    const [dropped] = (await jobsJson()).filter((j) => j.name === 'dropped-steps');
    await until('dropped-steps to hold memory', memoryJson, (m) => m.jobs.some((j) => j.id === dropped.id && j.persistentBytes > 0));
    // Launching opened the new job's drawer; its Kill button takes a confirming second press.
    const drawer = page.getByRole('complementary', { name: 'dropped-steps' });
    await drawer.getByRole('button', { name: 'Kill dropped-steps' }).click();
    await drawer.getByRole('button', { name: 'Confirm: kill dropped-steps' }).click();
    const [killed] = (await until('dropped-steps to be killed', jobsJson, (all) => all.some((j) => j.id === dropped.id && j.state === 'killed')))
      .filter((j) => j.id === dropped.id);
    expect(killed.lane).toBeNull();
    const memory = await memoryJson();
    expect(JSON.stringify(memory)).not.toContain(`"${dropped.id}"`);
    await until('the map to drop its segment', () => page.evaluate(readMemoryMap), (shown) => shown !== null && !(`job:${dropped.id}` in shown.segments));
    // The other job is untouched.
    expect((await jobsJson()).find((j) => j.name === 'e2e-train')?.state).toBe('running');
  });

  it('runs a shipped example from the Launch sheet in one click', async () => {
    await page.getByRole('button', { name: /Launch job/ }).click();
    const sheet = page.getByRole('dialog', { name: 'Launch a job' });
    await sheet.getByRole('button', { name: 'Run example wgsl-train' }).click();
    await sheet.waitFor({ state: 'detached', timeout: 20_000 });
    const all = await until('salus jobs to list wgsl-train', jobsJson, (jobs) => jobs.some((j) => j.name === 'wgsl-train'));
    const example = all.find((j) => j.name === 'wgsl-train')!;
    expect(example.state).not.toBe('failed');
    expect(example.pid).toBeGreaterThan(0);
    // The launch opened its drawer, as for any job.
    await page.getByRole('complementary', { name: 'wgsl-train' }).waitFor();
    await service.cli(['kill', example.id]);
  });

  it('logged no console errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
