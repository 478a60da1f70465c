/**
 * Bench job for upload throughput: one `--mib` MiB writeBuffer into a device
 * buffer, then `await onSubmittedWorkDone()`, `--repeats` times; the last bytes
 * are read back once to check that they arrived. Over the service the client
 * splits the write into socket frames; on a local device it is Dawn's own copy.
 * Imports nothing of ours.
 *
 * Prints `{"ev":"upload","i","bytes","ms","recordMs"}` per repeat (recordMs: until
 * writeBuffer returned, i.e. the job-side copy) and `{"ev":"verified"}`. With
 * `--readbacks R`, then reads the whole buffer back R times (copy into a MAP_READ
 * buffer, mapAsync, getMappedRange, every word checked after the clock stops)
 * and prints `{"ev":"readback","i","bytes","ms"}` for each.
 * Args: --mib M (default 256), --repeats N (default 5), --readbacks R (default 0).
 */
const now = () => performance.timeOrigin + performance.now();

function parseArgs(argv) {
  const opts = { mib: 256, repeats: 5, readbacks: 0 };
  const names = { '--mib': 'mib', '--repeats': 'repeats', '--readbacks': 'readbacks' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    const value = Number(argv[i + 1]);
    if (!key || !Number.isFinite(value)) throw new Error(`upload: bad argument ${argv[i]} ${argv[i + 1] ?? ''}`);
    opts[key] = value;
  }
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const bytes = opts.mib * 1024 * 1024;
const adapter = await navigator.gpu.requestAdapter();
if (!adapter) throw new Error('upload: no WebGPU adapter');
if (adapter.limits.maxBufferSize < bytes) throw new Error(`upload: adapter maxBufferSize ${adapter.limits.maxBufferSize} < ${bytes}`);
const device = await adapter.requestDevice({ label: 'upload', requiredLimits: { maxBufferSize: bytes } });
const target = device.createBuffer({ label: 'upload target', size: bytes, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
// The buffer exists before the clock starts on both sides (a service creates it when the next batch arrives).
await device.queue.onSubmittedWorkDone();
const data = new Uint32Array(bytes / 4);
for (let i = 0; i < data.length; i++) data[i] = i;

for (let i = 0; i < opts.repeats; i++) {
  data[data.length - 1] = i;
  const start = now();
  device.queue.writeBuffer(target, 0, data);
  const recorded = now();
  await device.queue.onSubmittedWorkDone();
  console.log(JSON.stringify({ ev: 'upload', i, bytes, ms: now() - start, recordMs: recorded - start }));
}

const readback = device.createBuffer({ label: 'upload readback', size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const encoder = device.createCommandEncoder();
encoder.copyBufferToBuffer(target, bytes - 16, readback, 0, 16);
device.queue.submit([encoder.finish()]);
await readback.mapAsync(GPUMapMode.READ);
const tail = Array.from(new Uint32Array(readback.getMappedRange()));
readback.unmap();
const n = data.length;
const expected = [n - 4, n - 3, n - 2, opts.repeats - 1];
if (tail.join() !== expected.join()) throw new Error(`upload: read back ${tail} instead of ${expected}`);
console.log(JSON.stringify({ ev: 'verified' }));

if (opts.readbacks > 0) {
  const whole = device.createBuffer({ label: 'upload whole readback', size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  // As for the target: the buffer exists before the clock starts on both sides.
  await device.queue.onSubmittedWorkDone();
  for (let i = 0; i < opts.readbacks; i++) {
    const start = now();
    const copy = device.createCommandEncoder();
    copy.copyBufferToBuffer(target, 0, whole, 0, bytes);
    device.queue.submit([copy.finish()]);
    await whole.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(whole.getMappedRange());
    const ms = now() - start;
    for (let k = 0; k < n - 1; k++) if (words[k] !== k) throw new Error(`upload: readback word ${k} is ${words[k]}`);
    whole.unmap();
    console.log(JSON.stringify({ ev: 'readback', i, bytes, ms }));
  }
  whole.destroy();
}
target.destroy();
readback.destroy();
device.destroy();
