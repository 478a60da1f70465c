/**
 * The session mutator (test/helpers/sessionMutator.ts) that the mutation fuzzer
 * relies on: seeded and pure, its mutants differ from the recording, a saved
 * mutant reads back byte for byte, and requestsOf counts what the service will
 * have to answer.
 */
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../../core/protocol/frames.js';
import { frameChunks } from '../../helpers/rawSocket.js';
import { PROTOCOL_VERSION } from '../../../core/protocol/messages.js';
import { prng } from '../../helpers/prng.js';
import { mutantFile, mutateSession, parseMutantFile, requestsOf } from '../../helpers/sessionMutator.js';
import type { RecordedFrame } from '../../helpers/recordingProxy.js';

const SESSION: RecordedFrame[] = [
  { header: { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'recorded' }, payload: new Uint8Array(0) },
  { header: { t: 'requestDevice', rid: 1 }, payload: new Uint8Array(0) },
  {
    header: { t: 'batch', cmds: [
      { op: 'createBuffer', id: 1, size: 16, usage: 0x8c },
      { op: 'createBuffer', id: 2, size: 16, usage: 0x9 },
      { op: 'writeBuffer', id: 1, offset: 0, data: [0, 16] },
      { op: 'createCommandEncoder', id: 3 },
      { op: 'copyBufferToBuffer', encoder: 3, src: 1, srcOffset: 0, dst: 2, dstOffset: 0, size: 16 },
      { op: 'finish', encoder: 3, id: 4 },
      { op: 'submit', commandBuffers: [4] },
      { op: 'mapAsync', rid: 2, id: 2, mode: 1, offset: 0, size: 16 },
    ] },
    payload: new Uint8Array(16).fill(7),
  },
  { header: { t: 'batch', cmds: [{ op: 'unmap', id: 2 }, { op: 'destroy', id: 2 }, { op: 'workDone', rid: 3 }] }, payload: new Uint8Array(0) },
  { header: { t: 'goodbye', exitCode: 0 }, payload: new Uint8Array(0) },
];
const context = { others: [SESSION], victimJobId: 'job-1' };
const concat = (parts: Uint8Array[]) => Buffer.concat(parts.map((p) => Buffer.from(p)));

describe('mutateSession', () => {
  it('gives the same mutant for the same seed, and leaves the recording as it was', () => {
    const before = JSON.stringify(SESSION.map((f) => f.header));
    for (let seed = 1; seed <= 50; seed++) {
      const a = mutateSession(SESSION, prng(seed), context);
      const b = mutateSession(SESSION, prng(seed), context);
      expect(a.mutations).toEqual(b.mutations);
      expect(concat(a.wire).equals(concat(b.wire))).toBe(true);
    }
    expect(JSON.stringify(SESSION.map((f) => f.header))).toBe(before);
  });

  it('changes the session in most cases, and keeps the hello first', () => {
    const original = concat(SESSION.flatMap((f) => encodeFrame(f.header, [f.payload])));
    let changed = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const mutant = mutateSession(SESSION, prng(seed), context);
      expect(mutant.mutations.length).toBeGreaterThan(0);
      if (!concat(mutant.wire).equals(original)) changed++;
    }
    expect(changed).toBeGreaterThan(80);
  });

  it('saves a mutant to bytes that read back exactly', () => {
    const mutant = mutateSession(SESSION, prng(9), context);
    const back = parseMutantFile(mutantFile(mutant));
    expect(back.mutations).toEqual(mutant.mutations);
    expect(back.hangUpAfterMs).toBe(mutant.hangUpAfterMs);
    expect(concat(back.wire).equals(concat(mutant.wire))).toBe(true);
  });
});

describe('requestsOf', () => {
  const wire = (frames: RecordedFrame[]) => frames.map((f) => concat(frameChunks(f.header, [f.payload])));

  it('counts the requests of accepted messages, a rid asked twice twice', () => {
    const session = [...SESSION, SESSION[3]];
    expect(requestsOf(wire(session))).toEqual({ rids: new Map([[1, 1], [2, 1], [3, 2]]), dropped: false });
  });

  it('expects a drop for a refused hello or a stream that cannot be framed', () => {
    expect(requestsOf(wire([{ header: { t: 'hello', protocol: 0, role: 'job' }, payload: new Uint8Array(0) }])).dropped).toBe(true);
    const bad = new Uint8Array(8);
    new DataView(bad.buffer).setUint32(0, 8, true);
    new DataView(bad.buffer).setUint32(4, 100, true);
    expect(requestsOf([...wire(SESSION.slice(0, 2)), bad])).toEqual({ rids: new Map([[1, 1]]), dropped: true });
  });
});
