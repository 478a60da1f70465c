// The iteration timer on a real device: GPU spans from timestamp queries, read
// back when the end is marked (early, at the job's sync point, or at `end`).
import { describe, expect, it } from 'vitest';
import { useFileDevice } from '../../helpers/fileDevice.js';
import { IterationTimer } from '../../../core/executor/iterationTimer.js';

const TIMESTAMPS: GPUFeatureName = 'timestamp-query';
const file = useFileDevice('iteration timer tests', (adapter) => (adapter.features.has(TIMESTAMPS) ? [TIMESTAMPS] : []));
/** Whether the adapter writes timestamps (then the device was opened with them). */
const hasTimestamps = () => file.adapter.features.has(TIMESTAMPS);

/** A command buffer that keeps the GPU busy for a while. */
function work(): GPUCommandBuffer {
  const module = file.device.createShaderModule({
    code: `@group(0) @binding(0) var<storage, read_write> out: array<f32>;
      @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
        var s = 0.0;
        for (var i = 0u; i < 20000u; i++) { s += sin(f32(i + id.x)); }
        out[id.x] = s;
      }`,
  });
  const pipeline = file.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const buffer = file.device.createBuffer({ size: 64 * 16 * 4, usage: GPUBufferUsage.STORAGE });
  const encoder = file.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, file.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer } }] }));
  pass.dispatchWorkgroups(16);
  pass.end();
  return encoder.finish();
}

/** Counts the file device's submits until `restore`. */
function countSubmits(): { readonly submits: number; restore(): void } {
  const { queue } = file.device;
  const submit = queue.submit.bind(queue);
  let submits = 0;
  queue.submit = (buffers: Iterable<GPUCommandBuffer>) => { submits++; submit(buffers); };
  return { get submits() { return submits; }, restore: () => { queue.submit = submit; } };
}

describe('IterationTimer', () => {
  it('exists exactly where the device can write timestamps', () => {
    expect(IterationTimer.create(file.device) !== null).toBe(hasTimestamps());
  });

  it('measures the GPU span of an iteration, no longer than its wall time', async () => {
    const timer = IterationTimer.create(file.device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    for (let round = 0; round < 2; round++) {
      timer.begin();
      const t0 = performance.now();
      file.device.queue.submit([...timer.takeBeginCommands(), work()]);
      const gpuMs = await timer.end();
      const wallMs = performance.now() - t0;
      expect(gpuMs).not.toBeNull();
      expect(gpuMs!).toBeGreaterThan(0);
      expect(gpuMs!).toBeLessThanOrEqual(wallMs);
    }
    timer.destroy();
  });

  it('reads the span once when the end is marked early: end() gives the same reading', async () => {
    const timer = IterationTimer.create(file.device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    const early = timer.markEnd();
    expect(timer.markEnd()).toBe(early);
    const reading = timer.end();
    expect(reading).toBe(early);
    expect(await reading).toBeGreaterThan(0);
    // The next iteration starts clean.
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    expect(await timer.end()).toBeGreaterThan(0);
    timer.destroy();
  });

  it('gives no span for an iteration that submitted nothing, or one never begun', async () => {
    const timer = IterationTimer.create(file.device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    expect(await timer.end()).toBeNull();
    timer.begin();
    expect(await timer.end()).toBeNull();
    // Begin commands are handed out once per iteration.
    timer.begin();
    expect(timer.takeBeginCommands()).toHaveLength(1);
    expect(timer.takeBeginCommands()).toHaveLength(0);
    file.device.queue.submit([]);
    timer.destroy();
  });

  it('writes the end stamp in the job\'s own last submit when asked, and then reads without a submit of its own', async () => {
    const { device } = file;
    const timer = IterationTimer.create(device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    const counter = countSubmits();
    try {
      // Not before the start stamp is written (no iteration, or its first submit not yet made).
      expect(timer.takeEndCommands()).toHaveLength(0);
      timer.begin();
      expect(timer.takeEndCommands()).toHaveLength(0);
      const t0 = performance.now();
      device.queue.submit([...timer.takeBeginCommands(), work(), ...timer.takeEndCommands()]);
      timer.reopen(); // the session's call after every submit of the job: this one carried the end
      const reading = timer.markEnd();
      const gpuMs = await timer.end();
      expect(await reading).toBe(gpuMs);
      expect(gpuMs).toBeGreaterThan(0);
      expect(gpuMs!).toBeLessThanOrEqual(performance.now() - t0);
      expect(counter.submits).toBe(1);
      // Work submitted after the carried end is covered: that reading submits its own end stamp.
      timer.begin();
      device.queue.submit([...timer.takeBeginCommands(), work(), ...timer.takeEndCommands()]);
      timer.reopen();
      device.queue.submit([work()]);
      timer.reopen();
      expect(await timer.end()).toBeGreaterThan(0);
      expect(counter.submits).toBe(4);
      // While a reading maps the readback buffer, no end is carried (a copy into it would fail the job's submit).
      timer.begin();
      device.queue.submit([...timer.takeBeginCommands(), work()]);
      const pending = timer.markEnd();
      timer.reopen();
      expect(timer.takeEndCommands()).toHaveLength(0);
      await pending;
      await timer.end();
    } finally {
      counter.restore();
    }
    timer.destroy();
  });

  it('carries the end in the submit that was last in the iteration before, and stamps again when more follow', async () => {
    const { device } = file;
    const timer = IterationTimer.create(device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    const counter = countSubmits();
    /** One submit of the job with no sync point after it in its batch, as the session makes it. */
    const jobSubmit = () => {
      device.queue.submit([...timer.takeBeginCommands(), work(), ...timer.takeEndCommands(false)]);
      timer.reopen();
    };
    try {
      // The first iteration has nothing to go by: its end takes a submit of its own.
      timer.begin();
      jobSubmit();
      jobSubmit();
      expect(await timer.end()).toBeGreaterThan(0);
      expect(counter.submits).toBe(3);
      // Two submits again: the second carries the end, and reading it takes no submit.
      timer.begin();
      const t0 = performance.now();
      jobSubmit();
      jobSubmit();
      const twoSubmitsMs = await timer.end();
      expect(counter.submits).toBe(5);
      expect(twoSubmitsMs).toBeGreaterThan(0);
      expect(twoSubmitsMs!).toBeLessThanOrEqual(performance.now() - t0);
      // A third submit after the carried end: the end is stamped again, after it, with a submit of its own.
      timer.begin();
      jobSubmit();
      jobSubmit();
      jobSubmit();
      // (A stale stamp reads as null: this one was written after the third submit.)
      expect(await timer.end()).toBeGreaterThan(0);
      expect(counter.submits).toBe(9);
    } finally {
      counter.restore();
    }
    timer.destroy();
  });

  it('reads again when work is submitted after the end was marked, so the span covers it', async () => {
    const timer = IterationTimer.create(file.device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    timer.begin();
    const t0 = performance.now();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    const early = timer.markEnd();
    // The job's marked iteration goes on: three more of the same work after its sync point.
    file.device.queue.submit([work()]);
    timer.reopen();
    file.device.queue.submit([work(), work()]);
    const reading = timer.end();
    expect(reading).not.toBe(early);
    const [earlyMs, spanMs] = [await early, await reading];
    const wallMs = performance.now() - t0;
    expect(earlyMs).toBeGreaterThan(0);
    expect(spanMs!).toBeGreaterThan(earlyMs!);
    expect(spanMs!).toBeLessThanOrEqual(wallMs);
    // A reopen outside an iteration changes nothing; the next iteration reads as before.
    timer.reopen();
    expect(await timer.markEnd()).toBeNull();
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    expect(await timer.end()).toBeGreaterThan(0);
    timer.destroy();
  });

  it('gives no span when the submit carrying the begin stamp failed: the stamps left there are older', async () => {
    const timer = IterationTimer.create(file.device);
    if (!timer) return expect(hasTimestamps()).toBe(false);
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    expect(await timer.end()).toBeGreaterThan(0);
    // A dispatch without a pipeline: the whole submit fails validation, the begin stamp with it.
    const encoder = file.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.dispatchWorkgroups(1);
    pass.end();
    file.device.pushErrorScope('validation');
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), encoder.finish()]);
    const reading = timer.end();
    expect(await file.device.popErrorScope()).not.toBeNull();
    expect(await reading).toBeNull();
    timer.begin();
    file.device.queue.submit([...timer.takeBeginCommands(), work()]);
    expect(await timer.end()).toBeGreaterThan(0);
    timer.destroy();
  });
});
