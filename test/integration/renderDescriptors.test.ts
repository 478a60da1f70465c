/**
 * Render descriptors from a client that skips the job side's WebIDL checks
 * (issue 18): Dawn's node binding aborts its whole process on a GPUBlendState
 * without `color` (tried on a local device), so before the service checked
 * descriptors itself one such job ended `salus serve` and every job on it. Now
 * each malformed descriptor is the sender's validation error and the service
 * serves on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { controlAnswers, rawSocket, sendFrame, until } from '../helpers/rawSocket.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

const SHADER = '@vertex fn vs() -> @builtin(position) vec4f { return vec4f(); } @fragment fn fs() -> @location(0) vec4f { return vec4f(); }';
const MODULE = { $ref: 1, $kind: 'shaderModule' };
const pipeline = (fragment: unknown) => ({ layout: 'auto', vertex: { module: MODULE }, fragment });

/** Descriptors the job side refuses with a TypeError, each as a raw client would send it. */
const MALFORMED: [string, Record<string, unknown>][] = [
  ['createRenderPipeline', pipeline({ module: MODULE, targets: [{ format: 'rgba8unorm', blend: { alpha: {} } }] })],
  ['createRenderPipeline', pipeline({ module: MODULE, targets: [{ format: 'rgba8unorm', blend: { color: {} } }] })],
  ['createRenderPipeline', { ...pipeline(undefined), primitive: { topology: 'triangle-fan' } }],
  ['createRenderPipeline', pipeline({ module: MODULE, targets: [{ format: 'bc1-rgba-unorm' }] })],
  ['beginRenderPass', { colorAttachments: [{ view: { $ref: 3, $kind: 'textureView' }, loadOp: 'keep', storeOp: 'store' }] }],
  ['createRenderBundleEncoder', { colorFormats: ['rgba8unorm', 'no-such-format'] }],
];

let service: TestService;
beforeAll(async () => {
  service = await startService(['--memory', '256MiB']);
});
afterAll(async () => {
  await service?.stop();
});

describe('malformed render descriptors from a raw client', () => {
  it('are the job\'s validation errors, one per descriptor, and the service serves on', async () => {
    const job = await rawSocket(service.socketPath);
    sendFrame(job.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'raw-render' });
    sendFrame(job.socket, { t: 'requestDevice', rid: 1 });
    await until(() => job.frames.find((f) => f.t === 'reply' && f.rid === 1), 'the device');
    sendFrame(job.socket, { t: 'batch', cmds: [
      { op: 'createShaderModule', id: 1, code: SHADER },
      { op: 'createTexture', id: 2, descriptor: { size: [4, 4, 1], mipLevelCount: 1, sampleCount: 1, dimension: '2d', format: 'rgba8unorm', usage: 0x10, viewFormats: [] } },
      { op: 'createView', id: 3, texture: 2 },
    ] });
    const rids: number[] = [];
    MALFORMED.forEach(([op, descriptor], i) => {
      const rid = 10 + i;
      rids.push(rid);
      const create = op === 'beginRenderPass'
        ? [{ op: 'createCommandEncoder', id: 200 + i }, { op, id: 100 + i, encoder: 200 + i, descriptor }, { op: 'finish', encoder: 200 + i, id: 300 + i }]
        : [{ op, id: 100 + i, descriptor }];
      sendFrame(job.socket, { t: 'batch', cmds: [{ op: 'pushErrorScope', filter: 'validation' }, ...create, { op: 'popErrorScope', rid }] });
    });
    const replies = await until(() => {
      const found = rids.map((rid) => job.frames.find((f) => f.t === 'reply' && f.rid === rid));
      return found.every(Boolean) ? found : null;
    }, 'a reply to each error scope', 30_000);
    for (const [i, reply] of replies.entries()) {
      expect(reply.result?.type, `${MALFORMED[i]![0]} #${i}`).toBe('validation');
    }
    await controlAnswers(service.socketPath);
    expect(service.process.exitCode).toBeNull();
    job.socket.destroy();
  }, 60_000);
});
