/**
 * Property-based fuzzing of the service socket with fast-check (issue 9): a
 * real `salus serve`, and clients that send random bytes, absurd length
 * prefixes, truncated frames, envelopes of any shape, and batches of
 * well-formed but wrong commands (invalid ids, sizes, usages, offsets, dynamic
 * offsets; use after destroy). Whatever they send, the service keeps serving,
 * answers every request exactly once, and another job's bytes stay as they were.
 *
 * Bounded in `npm test` (8 cases of batches, 4× as many of bytes and envelopes:
 * a few seconds); `npm run fuzz` runs 500 (a few minutes). FUZZ_RUNS sets the
 * count, FUZZ_SEED replays a run (each run prints its seed and cases).
 */
import fc from 'fast-check';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type TestService } from '../helpers/service.js';
import { controlAnswers, rawSocket, sendFrame, until } from '../helpers/rawSocket.js';
import { batchArbitrary, envelopeArbitrary, numberRequests, SETUP_COMMANDS, strangerBytesArbitrary } from '../helpers/protocolArbitraries.js';
import { FrameDecoder } from '../../core/protocol/frames.js';
import { PROTOCOL_VERSION } from '../../core/protocol/messages.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? (process.env.npm_lifecycle_event === 'fuzz' ? 500 : 8));
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const TIMEOUT_MS = 60_000 + RUNS * 2_000;
const PATTERN = 0x5a;

let service: TestService;
const casesRun: Record<string, number> = {};

beforeAll(async () => {
  // PACK: a lane per job, so one fuzzed job holding an iteration never blocks the next.
  service = await startService(['--memory', '256MiB', '--policy', 'PACK']);
});

afterAll(async () => {
  const total = Object.values(casesRun).reduce((a, b) => a + b, 0);
  console.log(`protocol fuzz: ${total} cases (${Object.entries(casesRun).map(([k, v]) => `${v} ${k}`).join(', ')}), seed ${SEED}`);
  await service?.stop();
});

/** A job on a bare socket that keeps payloads too (for the victim's readback). */
async function victimJob() {
  const socket = connect(service.socketPath);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.on('error', () => undefined); // a dead service shows as a timeout below, with its log
  const decoder = new FrameDecoder();
  const frames: { header: any; payload: Uint8Array }[] = [];
  socket.on('data', (chunk) => frames.push(...decoder.push(chunk)));
  sendFrame(socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'victim' });
  sendFrame(socket, { t: 'requestDevice', rid: 1 });
  await until(() => frames.find((f) => f.header.t === 'reply' && f.header.rid === 1), 'the victim\'s device');
  sendFrame(socket, { t: 'batch', cmds: [
    { op: 'createBuffer', id: 1, size: 1024, usage: 0x8c }, // STORAGE | COPY_DST | COPY_SRC
    { op: 'createBuffer', id: 2, size: 1024, usage: 0x9 }, // MAP_READ | COPY_DST
    { op: 'writeBuffer', id: 1, offset: 0, data: [0, 1024] },
  ] }, [new Uint8Array(1024).fill(PATTERN)]);
  return {
    socket,
    /** The victim's buffer as it reads now. */
    async read(): Promise<Uint8Array> {
      sendFrame(socket, { t: 'batch', cmds: [
        { op: 'createCommandEncoder', id: 3 },
        { op: 'copyBufferToBuffer', encoder: 3, src: 1, srcOffset: 0, dst: 2, dstOffset: 0, size: 1024 },
        { op: 'finish', encoder: 3, id: 4 },
        { op: 'submit', commandBuffers: [4] },
        { op: 'mapAsync', rid: 2, id: 2, mode: 1, offset: 0, size: 1024 },
      ] });
      return (await until(() => frames.find((f) => f.header.t === 'reply' && f.header.rid === 2), 'the victim\'s readback', 30_000)).payload;
    },
  };
}

/** The service answers a control call on a fresh connection. */
async function stillServes(): Promise<void> {
  await controlAnswers(service.socketPath)
    .catch((error: Error) => { throw new Error(`${error.message}; exit ${service.process.exitCode}; the service's log ends:\n${service.log().slice(-3000)}`); });
  expect(service.process.exitCode).toBeNull();
}

const options = (numRuns: number) => ({ numRuns, seed: SEED, endOnFailure: true });

describe('the socket under property-based fuzzing', () => {
  it('survives strangers: random bytes, absurd prefixes and truncated frames before hello', async () => {
    await fc.assert(fc.asyncProperty(strangerBytesArbitrary, async (bytes) => {
      casesRun.strangers = (casesRun.strangers ?? 0) + 1;
      const stranger = await rawSocket(service.socketPath);
      stranger.socket.end(bytes);
      await Promise.race([stranger.closed, new Promise((r) => setTimeout(r, 50))]);
      stranger.socket.destroy();
    }), options(RUNS * 4));
    await stillServes();
  }, TIMEOUT_MS);

  it('survives envelopes of any shape after a job\'s hello', async () => {
    await fc.assert(fc.asyncProperty(fc.array(envelopeArbitrary, { minLength: 1, maxLength: 4 }), async (envelopes) => {
      casesRun.envelopes = (casesRun.envelopes ?? 0) + 1;
      const job = await rawSocket(service.socketPath);
      sendFrame(job.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'shapes' });
      for (const envelope of envelopes) sendFrame(job.socket, envelope ?? null);
      await Promise.race([job.closed, new Promise((r) => setTimeout(r, 10))]);
      job.socket.destroy();
    }), options(RUNS * 4));
    await stillServes();
  }, TIMEOUT_MS);

  it('answers every request of wrong command batches exactly once, and never touches another job', async () => {
    const victim = await victimJob();
    await fc.assert(fc.asyncProperty(fc.array(batchArbitrary, { minLength: 1, maxLength: 3 }), async (batches) => {
      casesRun.batches = (casesRun.batches ?? 0) + 1;
      const job = await rawSocket(service.socketPath);
      sendFrame(job.socket, { t: 'hello', protocol: PROTOCOL_VERSION, role: 'job', name: 'fuzzed' });
      sendFrame(job.socket, { t: 'requestDevice', rid: 1 });
      sendFrame(job.socket, { t: 'batch', cmds: SETUP_COMMANDS });
      let next = 2;
      const asked: number[] = [];
      for (const { cmds, payload } of batches) {
        asked.push(...numberRequests(cmds, () => next++));
        sendFrame(job.socket, { t: 'batch', cmds }, [payload]);
      }
      const last = next;
      asked.push(last);
      sendFrame(job.socket, { t: 'batch', cmds: [{ op: 'iterationEnd' }, { op: 'workDone', rid: last }] });
      await until(() => job.frames.some((f) => f.t === 'reply' && f.rid === last), 'the last request\'s reply', 30_000);
      // Replies to maps and error scopes may follow the last one: wait for those, then count.
      await until(() => asked.every((rid) => job.frames.some((f) => f.t === 'reply' && f.rid === rid)), 'a reply to every request', 10_000);
      const answers = new Map<number, number>();
      for (const f of job.frames) if (f.t === 'reply') answers.set(f.rid, (answers.get(f.rid) ?? 0) + 1);
      expect(asked.filter((rid) => answers.get(rid) !== 1)).toEqual([]);
      job.socket.destroy();
    }), options(RUNS));
    const bytes = await victim.read();
    expect(bytes.byteLength).toBe(1024);
    expect(bytes.every((b) => b === PATTERN)).toBe(true);
    victim.socket.destroy();
    await stillServes();
  }, TIMEOUT_MS);
});
