/**
 * A recording proxy for the service socket: a Unix socket that jobs connect to
 * (through `SALUS_SOCKET`) and that relays every byte to a real service, while
 * copying each frame the job sends into a recorded session. Core needs no
 * hook: the recording is what the job really put on the wire, in order.
 *
 * The one thing it changes is the service's `welcome`: it offers no bulk
 * channel, so every byte of the session travels in its frames and a recording
 * replays on any service (a bulk file is gone once the service has read it).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeFrame, FrameDecoder, type Frame } from '../../core/protocol/frames.js';

/** One frame a job sent: its header as parsed and its payload (a copy). */
export interface RecordedFrame {
  header: unknown;
  payload: Uint8Array;
}

/** A running proxy: `sessions` holds one list of frames per connection, in connection order. */
export interface RecordingProxy {
  socketPath: string;
  sessions: RecordedFrame[][];
  close(): Promise<void>;
}

/** Listens at `socketPath` and relays each connection to the service at `servicePath`. */
export async function startRecordingProxy(servicePath: string, socketPath: string): Promise<RecordingProxy> {
  const sessions: RecordedFrame[][] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((job) => {
    const session: RecordedFrame[] = [];
    sessions.push(session);
    const service = connect(servicePath);
    open.add(job).add(service);
    const fromJob = new FrameDecoder();
    const fromService = new FrameDecoder();
    job.on('data', (chunk: Buffer) => {
      service.write(chunk);
      for (const frame of fromJob.push(chunk)) session.push({ header: frame.header, payload: frame.payload.slice() });
    });
    service.on('data', (chunk: Buffer) => {
      for (const frame of fromService.push(chunk)) for (const part of encodeFrame(withoutBulk(frame).header, [frame.payload])) job.write(part);
    });
    const end = () => { job.end(); service.end(); open.delete(job); open.delete(service); };
    job.on('end', end).on('error', end);
    service.on('end', end).on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  return {
    socketPath,
    sessions,
    close: () => new Promise((resolve) => {
      for (const socket of open) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

function withoutBulk(frame: Frame): Frame {
  const header = frame.header as { t?: unknown } | null;
  return header?.t === 'welcome' ? { ...frame, header: { ...header, bulkDir: null } } : frame;
}
