/**
 * Bench instrument (timed.js `--gpu-times`): how long the GPU spends on each of
 * the job's submits, on the GPU's own clock. Every `queue.submit` gets an empty
 * compute pass before the job's command buffers that writes a timestamp at its
 * beginning, and one after them that writes one at its end; the pairs are
 * resolved and read back every `CHUNK` submits (and at `flush`). A submit's time
 * thus covers the GPU executing its work, not time queued behind earlier work.
 * It adds two passes and two command buffers per submit, so an instrumented run
 * is for this reading only, never for wall-time figures.
 * A local device keeps Dawn's timestamp quantization (stamps rounded down to a
 * 65 µs step on SwiftShader; the service's shared device turns it off), so one
 * submit's time there is coarse, while sums and medians over many are not biased.
 *
 * Devices get `timestamp-query` where their adapter has it (added to the job's
 * requiredFeatures); without it nothing is recorded. Imports nothing of ours:
 * it wraps the WebGPU globals, a local device's and the service's remote GPU's alike.
 */

/** Submits per query set; resolved and read back when full. */
const CHUNK = 64;

/**
 * Installs the wrappers. `record(submittedAtMs, gpuUs)` is called for every
 * submit once its stamps are read back (epoch ms at the submit call, the GPU's
 * time between the two stamps in µs). Returns `flush()`, which reads back what
 * is pending and resolves when every record is made.
 */
export function installGpuTimes(record) {
  const now = () => performance.timeOrigin + performance.now();
  const deviceOfQueue = new WeakMap();
  /** Per queue, the chunk being filled (a Map, not a WeakMap, so `flush` can list them; a job has a few queues). */
  const chunkOf = new Map();
  const reading = new Set();

  const adapterProto = globalThis.GPUAdapter.prototype;
  const requestDevice = adapterProto.requestDevice;
  adapterProto.requestDevice = async function requestDeviceWithTimestamps(descriptor = {}) {
    const features = [...(descriptor?.requiredFeatures ?? [])];
    if (this.features.has('timestamp-query') && !features.includes('timestamp-query')) features.push('timestamp-query');
    const device = await requestDevice.call(this, { ...descriptor, requiredFeatures: features });
    if (device.features.has('timestamp-query')) deviceOfQueue.set(device.queue, device);
    return device;
  };

  /** Resolves `chunk`'s stamps in a submit of its own and records them once mapped. */
  function readBack(queue, device, chunk) {
    if (chunk.used === 0) return;
    const bytes = chunk.used * 16;
    const resolved = device.createBuffer({ size: bytes, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const mapped = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = device.createCommandEncoder();
    encoder.resolveQuerySet(chunk.querySet, 0, chunk.used * 2, resolved, 0);
    encoder.copyBufferToBuffer(resolved, 0, mapped, 0, bytes);
    submit.call(queue, [encoder.finish()]);
    const done = mapped.mapAsync(GPUMapMode.READ).then(() => {
      const stamps = new BigUint64Array(mapped.getMappedRange());
      for (let i = 0; i < chunk.used; i++) {
        const [begin, end] = [stamps[2 * i], stamps[2 * i + 1]];
        if (end >= begin && begin > 0n) record(chunk.submittedAt[i], Number(end - begin) / 1000);
      }
      mapped.unmap();
      for (const buffer of [mapped, resolved]) buffer.destroy();
      chunk.querySet.destroy();
    }).catch(() => {
      // The job destroyed its device first (an example's own cleanup): this chunk's submits go unrecorded.
    }).finally(() => reading.delete(done));
    reading.add(done);
  }

  const queueProto = globalThis.GPUQueue.prototype;
  const submit = queueProto.submit;
  queueProto.submit = function submitWithTimestamps(commandBuffers) {
    const device = deviceOfQueue.get(this);
    if (!device) return submit.call(this, commandBuffers);
    let chunk = chunkOf.get(this);
    if (!chunk) {
      chunk = { querySet: device.createQuerySet({ type: 'timestamp', count: CHUNK * 2 }), used: 0, submittedAt: [] };
      chunkOf.set(this, chunk);
    }
    const index = chunk.used++;
    chunk.submittedAt.push(now());
    const stamp = (writes) => {
      const encoder = device.createCommandEncoder();
      encoder.beginComputePass({ timestampWrites: { querySet: chunk.querySet, ...writes } }).end();
      return encoder.finish();
    };
    const result = submit.call(this, [stamp({ beginningOfPassWriteIndex: 2 * index }), ...commandBuffers, stamp({ endOfPassWriteIndex: 2 * index + 1 })]);
    if (chunk.used === CHUNK) {
      chunkOf.delete(this);
      readBack(this, device, chunk);
    }
    return result;
  };

  // An example that destroys its device when done would lose the stamps not yet read: the destroy waits for them.
  const deviceProto = globalThis.GPUDevice.prototype;
  const destroy = deviceProto.destroy;
  deviceProto.destroy = function destroyAfterReadback() {
    const chunk = chunkOf.get(this.queue);
    if (chunk) {
      chunkOf.delete(this.queue);
      readBack(this.queue, this, chunk);
    }
    if (reading.size === 0) return destroy.call(this);
    void Promise.all([...reading]).then(() => destroy.call(this));
    return undefined;
  };

  return async function flush() {
    for (const [queue, chunk] of [...chunkOf]) {
      chunkOf.delete(queue);
      readBack(queue, deviceOfQueue.get(queue), chunk);
    }
    while (reading.size > 0) await Promise.all([...reading]);
  };
}
