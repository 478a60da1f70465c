// The idle-queue shortcut on a real (SwiftShader) device in this process, with the poll throttle installed as
// `salus serve` installs it: answered at once only when no queue work ran since an earlier answer of Dawn's and
// dawn.node has no promise pending; otherwise Dawn is asked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dawnIdle, throttleDawnPolling } from '../../../core/executor/dawnPolling.js';
import { countQueueWork, whenQueueDone } from '../../../core/executor/queueActivity.js';
import { installWebGpuGlobals, openAdapter } from '../../../core/platform/gpu.js';

let device: GPUDevice;
const undo: (() => void)[] = [];

beforeAll(async () => {
  installWebGpuGlobals();
  device = await (await openAdapter()).adapter.requestDevice();
  undo.push(throttleDawnPolling().restore);
});

afterAll(() => {
  for (const restore of undo.reverse()) restore();
  device.destroy();
});

/** Asks; whether the answer came before whenQueueDone returned, and a promise of the answer. */
function ask(): { sync: boolean; answered: Promise<void> } {
  let sync = false;
  let returned = false;
  const answered = new Promise<void>((resolve, reject) => whenQueueDone(device, () => {
    sync = !returned;
    resolve();
  }, reject));
  returned = true;
  return { sync, answered };
}

describe('whenQueueDone', () => {
  it('always asks Dawn while queue work is not counted', async () => {
    for (let i = 0; i < 2; i++) {
      const call = ask();
      expect(call.sync).toBe(false);
      await call.answered;
    }
  });

  it('answers at once after an answer of Dawn\'s with no queue work since, and asks again after any', async () => {
    undo.push(countQueueWork());
    const first = ask();
    expect(first.sync).toBe(false);
    await first.answered;
    expect(dawnIdle()).toBe(true);
    expect(ask().sync).toBe(true);
    expect(ask().sync).toBe(true);

    const buffer = device.createBuffer({ size: 1 << 20, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
    device.queue.writeBuffer(buffer, 0, new Uint8Array(1 << 20).fill(3));
    const afterWrite = ask();
    expect(afterWrite.sync).toBe(false);
    await afterWrite.answered;
    expect(ask().sync).toBe(true);

    // An empty submit is queue work too, and so is another device's.
    device.queue.submit([]);
    const afterSubmit = ask();
    expect(afterSubmit.sync).toBe(false);
    await afterSubmit.answered;
    const other = await (await openAdapter()).adapter.requestDevice();
    other.queue.submit([]);
    const afterOther = ask();
    expect(afterOther.sync).toBe(false);
    await afterOther.answered;
    other.destroy();

    // A pending mapAsync comes first: Dawn is asked, and answers after it.
    expect(ask().sync).toBe(true);
    const order: string[] = [];
    const mapped = buffer.mapAsync(GPUMapMode.READ).then(() => order.push('map'));
    const whileMapping = ask();
    expect(whileMapping.sync).toBe(false);
    await Promise.all([mapped, whileMapping.answered.then(() => order.push('done'))]);
    expect(order).toEqual(['map', 'done']);
    expect(new Uint8Array(buffer.getMappedRange())[12345]).toBe(3);
    buffer.destroy();
  });
});
