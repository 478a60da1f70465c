/**
 * The service in-process, over the in-memory transport pair
 * (core/server/memoryTransport.ts): one real shared device (SwiftShader) for
 * the file, a fresh SalusService per test, and peers that speak the socket
 * protocol's frames to it. After each test the service is disposed and its
 * ledger must be empty.
 */
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { openGpu, type OpenedGpu } from '../../../core/platform/gpu.js';
import { FrameDecoder } from '../../../core/protocol/frames.js';
import { frameChunks } from '../../helpers/rawSocket.js';
import { PROTOCOL_VERSION, type ServerMessage } from '../../../core/protocol/messages.js';
import type { ClusterJobs } from '../../../core/protocol/cluster.js';
import { createTransportPair } from '../../../core/server/memoryTransport.js';
import { acceptConnection } from '../../../core/server/socketServer.js';
import type { ControlTarget } from '../../../core/service/control.js';
import { SalusService, type ServiceOptions } from '../../../core/service/service.js';

export const MiB = 1024 * 1024;

/** One side of a connection to the service: frames out, frame headers in. */
export class Peer {
  readonly received: ServerMessage[] = [];
  readonly closed: Promise<void>;
  private nextRid = 1;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly socket: import('node:net').Socket) {
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) this.received.push(frame.header as ServerMessage);
      for (const wake of [...this.waiters]) wake();
    });
    this.closed = new Promise((resolve) => socket.on('close', () => { resolve(); for (const wake of [...this.waiters]) wake(); }));
  }

  /** Sends one frame; a batch's commands as objects are encoded as the wire's binary batch. */
  send(header: object): void {
    for (const chunk of frameChunks(header)) this.socket.write(chunk);
  }

  /** The first message received that `match` accepts (waiting up to `timeoutMs`). */
  async next<T extends ServerMessage>(match: (message: ServerMessage) => boolean, what = 'a message', timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found as T;
      if (Date.now() > deadline || this.socket.destroyed) throw new Error(`no ${what}; got ${JSON.stringify(this.received).slice(0, 2000)}`);
      await new Promise<void>((resolve) => {
        const wake = () => { this.waiters.delete(wake); clearTimeout(timer); resolve(); };
        const timer = setTimeout(wake, 50);
        this.waiters.add(wake);
      });
    }
  }

  /** A control call; resolves with its reply (result or error). */
  async call(method: string, ...params: unknown[]): Promise<Extract<ServerMessage, { t: 'reply' }>> {
    const rid = this.nextRid++;
    this.send({ t: 'call', rid, method, params });
    return this.next((m) => m.t === 'reply' && m.rid === rid, `the reply to ${method}`);
  }

  /** A job's requestDevice; resolves with its reply. */
  async requestDevice(): Promise<Extract<ServerMessage, { t: 'reply' }>> {
    const rid = this.nextRid++;
    this.send({ t: 'requestDevice', rid });
    return this.next((m) => m.t === 'reply' && m.rid === rid, 'the device reply');
  }

  /** The job states the service told this peer, in order. */
  states(): string[] {
    return this.received.filter((m) => m.t === 'state').map((m) => (m as { state: string }).state);
  }

  close(): void {
    this.socket.end();
  }
}

export interface ServiceHarness {
  readonly gpu: OpenedGpu;
  /** A fresh service for this test (disposed after it). */
  /** `capacityBytes` sizes the one GPU of the test's device (64 MiB unless given), where `gpus` does not say otherwise. */
  start(options?: Partial<ServiceOptions> & { capacityBytes?: number }, cluster?: Partial<ControlTarget['cluster']>): SalusService;
  readonly service: SalusService;
  readonly target: ControlTarget;
  readonly log: string[];
  /** A control client, welcomed. */
  control(): Promise<Peer>;
  /** A job, welcomed; `hello` adds to its hello. */
  job(hello?: Record<string, unknown>): Promise<{ peer: Peer; jobId: string }>;
}

/** Registers the file's hooks; call once at the top level of a test file. */
export function useService(): ServiceHarness {
  let gpu: OpenedGpu | undefined;
  let service: SalusService | undefined;
  let target: ControlTarget | undefined;
  const peers: Peer[] = [];
  const log: string[] = [];

  beforeAll(async () => {
    gpu = await openGpu();
  }, 30_000);
  afterAll(() => gpu?.device.destroy());
  afterEach(async () => {
    for (const peer of peers.splice(0)) {
      peer.close();
      await peer.closed;
    }
    service?.dispose();
    if (service) expect(service.memoryMap().usedBytes, 'bytes left in the ledger').toBe(0);
    service = undefined;
    log.length = 0;
  });

  const connect = async (hello: Record<string, unknown>) => {
    const pair = createTransportPair();
    acceptConnection(target!, pair.service, 'memory');
    const peer = new Peer(pair.peer);
    peers.push(peer);
    peer.send({ t: 'hello', protocol: PROTOCOL_VERSION, ...hello });
    const welcome = await peer.next<Extract<ServerMessage, { t: 'welcome' }>>((m) => m.t === 'welcome', 'a welcome');
    return { peer, welcome };
  };

  return {
    get gpu() { return gpu!; },
    get service() { return service!; },
    get target() { return target!; },
    log,
    start(options = {}, cluster = {}) {
      const { capacityBytes = 64 * MiB, ...rest } = options;
      service = new SalusService({ gpus: [{ gpu: gpu!, capacityBytes, capacitySource: 'test' }], log: (line) => log.push(line), ...rest });
      target = {
        service,
        launcher: null,
        cluster: {
          jobs: async (): Promise<ClusterJobs> => ({ available: false, reason: 'no Slurm in this test' }),
          cancel: async () => undefined,
          ...cluster,
        },
      };
      return service;
    },
    async control() {
      return (await connect({ role: 'control' })).peer;
    },
    async job(hello = {}) {
      const { peer, welcome } = await connect({ role: 'job', name: 'test-job', ...hello });
      return { peer, jobId: welcome.jobId! };
    },
  };
}
