import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, FrameError, INLINE_PAYLOAD_BYTES, MAX_FRAME_BYTES } from '../../../core/protocol/frames.js';

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.byteLength; }
  return out;
}

describe('frames', () => {
  it('round-trips a header and a payload given in parts', () => {
    const payload = [new Uint8Array([1, 2, 3]), new Uint8Array([4, 5])];
    const [frame] = new FrameDecoder().push(concat(encodeFrame({ t: 'batch', n: 1 }, payload)));
    expect(frame.header).toEqual({ t: 'batch', n: 1 });
    expect([...frame.payload]).toEqual([1, 2, 3, 4, 5]);
  });

  it('copies a payload of up to INLINE_PAYLOAD_BYTES into one chunk, and leaves a larger one in its parts', () => {
    // A dirty allocator: every byte of the chunk must be written by the encoder (a pool's memory is not zeroed).
    const dirty = (bytes: number) => new Uint8Array(bytes).fill(0xee);
    for (const header of [{ t: 'batch', commandBytes: 8 }, { t: 'reply', label: 'größe' }]) {
      const small = [new Uint8Array(8).fill(1), new Uint8Array(0), new Uint8Array(INLINE_PAYLOAD_BYTES - 8).fill(2)];
      const chunks = encodeFrame(header, small, dirty);
      expect(chunks).toHaveLength(1);
      const [frame] = new FrameDecoder().push(chunks[0]);
      expect(frame.header).toEqual(header);
      expect([...frame.payload]).toEqual([...concat(small)]);
    }
    const large = [new Uint8Array(8).fill(3), new Uint8Array(INLINE_PAYLOAD_BYTES).fill(4)];
    const chunks = encodeFrame({ t: 'batch', commandBytes: 8 }, large, dirty);
    expect(chunks).toHaveLength(3);
    expect(chunks[1]).toBe(large[0]);
    expect([...new FrameDecoder().push(concat(chunks))[0].payload]).toEqual([...concat(large)]);
  });

  it('encodes short ASCII, short non-ASCII and long headers alike as UTF-8 JSON', () => {
    for (const header of [{ t: 'reply', rid: 7, result: {} }, { t: 'reply', label: 'größe €😀' }, { t: 'x', text: 'é'.repeat(300) }, { t: 'x', text: 'a'.repeat(300) }]) {
      const [head] = encodeFrame(header);
      const json = new TextEncoder().encode(JSON.stringify(header));
      const view = new DataView(head.buffer, head.byteOffset);
      expect(view.getUint32(0, true)).toBe(4 + json.byteLength);
      expect(view.getUint32(4, true)).toBe(json.byteLength);
      expect([...head.subarray(8)]).toEqual([...json]);
      expect(new FrameDecoder().push(head)[0].header).toEqual(header);
    }
  });

  it('reassembles frames split at every byte, and several frames in one chunk', () => {
    const bytes = concat([
      ...encodeFrame({ a: 1 }, [new Uint8Array(300).fill(7)]),
      ...encodeFrame({ b: 'ü' }),
      ...encodeFrame({ c: [1, 2] }, [new Uint8Array([9])]),
    ]);
    const byteWise = new FrameDecoder();
    const frames = [];
    for (let i = 0; i < bytes.byteLength; i++) frames.push(...byteWise.push(bytes.subarray(i, i + 1)));
    expect(frames.map((f) => f.header)).toEqual([{ a: 1 }, { b: 'ü' }, { c: [1, 2] }]);
    expect(frames[0].payload.every((x) => x === 7)).toBe(true);
    expect(frames[0].payload.byteLength).toBe(300);
    expect(byteWise.pendingBytes).toBe(0);
    const whole = new FrameDecoder().push(bytes);
    expect(whole.map((f) => f.header)).toEqual(frames.map((f) => f.header));
  });

  it('reports a header that is not JSON as an Error in place of the header, and keeps framing', () => {
    const text = new TextEncoder().encode('{oops');
    const bad = new Uint8Array(8 + text.byteLength);
    new DataView(bad.buffer).setUint32(0, 4 + text.byteLength, true);
    new DataView(bad.buffer).setUint32(4, text.byteLength, true);
    bad.set(text, 8);
    const frames = new FrameDecoder().push(concat([bad, ...encodeFrame({ ok: true })]));
    expect(frames[0].header).toBeInstanceOf(Error);
    expect(frames[1].header).toEqual({ ok: true });
  });

  it('holds memory for the bytes that arrived, not for what a length prefix declares', () => {
    const MiB = 1 << 20;
    const payload = new Uint8Array(200 * MiB);
    for (let i = 0; i < payload.byteLength; i += 4096) payload[i] = (i / 4096) & 0xff;
    const bytes = concat(encodeFrame({ t: 'big' }, [payload]));
    const decoder = new FrameDecoder();
    expect(decoder.push(bytes.subarray(0, 100 * 1024))).toEqual([]);
    expect(decoder.heldBytes).toBeLessThanOrEqual(256 * 1024);
    const frames = [];
    let peakRatio = 0;
    for (let at = 100 * 1024; at < bytes.byteLength; at += 3 * MiB + 17) {
      frames.push(...decoder.push(bytes.subarray(at, Math.min(bytes.byteLength, at + 3 * MiB + 17))));
      if (decoder.pendingBytes > 0) peakRatio = Math.max(peakRatio, decoder.heldBytes / decoder.pendingBytes);
    }
    expect(peakRatio).toBeLessThanOrEqual(2.1);
    expect(frames).toHaveLength(1);
    expect(frames[0].header).toEqual({ t: 'big' });
    expect(Buffer.compare(frames[0].payload, payload)).toBe(0);
    expect(decoder.heldBytes).toBe(0);
  });

  it('throws FrameError on a length past the limit or a header longer than its frame', () => {
    const big = new Uint8Array(8);
    new DataView(big.buffer).setUint32(0, 1024, true);
    expect(() => new FrameDecoder(512).push(big)).toThrow(FrameError);
    const inconsistent = new Uint8Array(8);
    new DataView(inconsistent.buffer).setUint32(0, 8, true);
    new DataView(inconsistent.buffer).setUint32(4, 100, true);
    expect(() => new FrameDecoder().push(inconsistent)).toThrow(/does not fit/);
    expect(() => encodeFrame({}, [new Uint8Array(0), { byteLength: MAX_FRAME_BYTES } as Uint8Array])).toThrow(FrameError);
  });
});
