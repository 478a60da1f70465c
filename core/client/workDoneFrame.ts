/**
 * The frame every idle awaited call sends: a batch of one `workDone` command
 * (an `onSubmittedWorkDone` with nothing recorded before it). It is made once,
 * by the command codec and the frame encoder themselves, and each call writes
 * its request id into it: no command record, JSON header or frame is built per
 * call, which in a fresh job's first thousand calls (code V8 has not compiled
 * yet) is a sizeable part of the job's side of the round trip.
 *
 * The service receives exactly the bytes the general path would send
 * (test/unit/client/workDoneFrame.test.ts holds the two equal).
 */
import { CommandWriter } from '../protocol/commandCodec.js';
import { encodeFrame } from '../protocol/frames.js';

/** Request ids the frame is built with, to find where a call's id goes (they differ in every byte). */
const PROBE_RIDS = [0x01020304, 0xfaf9f8f7] as const;

/** The whole frame of `{ op: 'workDone', rid }` alone in a batch, as the general path encodes it. */
export function encodeWorkDoneFrame(rid: number): Uint8Array {
  const writer = new CommandWriter();
  writer.write({ op: 'workDone', rid });
  const commands = writer.take();
  return Buffer.concat(encodeFrame({ t: 'batch', commandBytes: commands.byteLength }, [commands]));
}

export class WorkDoneFrame {
  private constructor(private frame: Buffer, private readonly ridAt: number) {}

  /**
   * The frame, or null if the request id is not one little-endian u32 at the
   * same place in every such frame (the caller then takes the general path).
   */
  static create(): WorkDoneFrame | null {
    const [a, b] = PROBE_RIDS.map(encodeWorkDoneFrame);
    if (a.byteLength !== b.byteLength) return null;
    let ridAt = -1;
    for (let i = 0; i < a.byteLength; i++) {
      if (a[i] === b[i]) continue;
      if (ridAt < 0) ridAt = i;
      if (i >= ridAt + 4) return null;
    }
    const frame = Buffer.from(a);
    if (ridAt < 0 || frame.readUInt32LE(ridAt) !== PROBE_RIDS[0] || Buffer.from(b).readUInt32LE(ridAt) !== PROBE_RIDS[1]) return null;
    return new WorkDoneFrame(frame, ridAt);
  }

  /**
   * The frame for request `rid`. `reuse`: the previous one has left the process
   * (nothing queued on the socket), so its buffer is written again; else a copy is made.
   */
  bytesFor(rid: number, reuse: boolean): Buffer {
    if (!reuse) this.frame = Buffer.from(this.frame);
    this.frame.writeUInt32LE(rid, this.ridAt);
    return this.frame;
  }
}
