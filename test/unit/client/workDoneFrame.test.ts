/**
 * An idle awaited call's prebuilt frame is byte for byte the frame the general
 * path encodes (command codec, then frame encoder), for any request id.
 */
import { describe, expect, it } from 'vitest';
import { encodeWorkDoneFrame, WorkDoneFrame } from '../../../core/client/workDoneFrame.js';
import { FrameDecoder } from '../../../core/protocol/frames.js';
import { decodeCommands } from '../../../core/protocol/commandCodec.js';

describe('WorkDoneFrame', () => {
  it('writes each request id where the general path puts it, reusing its buffer or copying it', () => {
    const frame = WorkDoneFrame.create()!;
    expect(frame).not.toBeNull();
    let previous: Uint8Array | null = null;
    for (const [rid, reuse] of [[1, true], [255, true], [65_536, false], [0x7fffffff, true], [0xffffffff, false]] as const) {
      const before = previous ? Uint8Array.from(previous) : null;
      const bytes = frame.bytesFor(rid, reuse);
      expect([...bytes]).toEqual([...encodeWorkDoneFrame(rid)]);
      // A copy leaves the bytes handed out before as they were.
      if (previous && !reuse) expect([...previous]).toEqual([...before!]);
      if (previous) expect(bytes === previous).toBe(reuse);
      previous = bytes;
      const [decoded] = new FrameDecoder().push(Uint8Array.from(bytes));
      expect(decoded.header).toEqual({ t: 'batch', commandBytes: 8 });
      expect(decodeCommands(decoded.payload).cmds).toEqual([{ op: 'workDone', rid }]);
    }
  });
});
