/**
 * The IPC gate: one `ipcMain.handle` per invoke method. Every call is refused
 * unless it comes from our window's main frame showing our own app URL, and
 * its arguments are validated with zod before anything is forwarded — the
 * renderer is treated as untrusted input, as Electron's security checklist
 * asks (https://www.electronjs.org/docs/latest/tutorial/security#17-validate-the-sender-of-all-ipc-messages).
 */
import { z } from 'zod';
import { describeZodError, jobHintsSchema } from '../core/protocol/messages.js';
import { POLICY_NAMES } from '../core/protocol/state.js';
import { SLURM_JOB_ID } from '../core/protocol/cluster.js';
import type { ConnectionState } from '../core/protocol/api.js';
import type { BridgeMethod } from '../core/protocol/bridge.js';
import { isAppUrl } from './appProtocol.js';
import { invokeChannel, type InvokeMethod, type ServiceStatus } from './desktopApi.js';
import { checkJobFile } from './jobFiles.js';

const jobId = z.string().min(1).max(64);
const knobs = z.record(z.string().min(1).max(64), z.union([z.number().finite(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= 64, 'at most 64 knobs');
const absolutePath = z.string().min(1).max(4096).refine((value) => !value.includes('\0'), 'a path without NUL characters');

/** The arguments each invoke method accepts; anything else is refused. */
export const INVOKE_SCHEMAS = {
  snapshot: z.tuple([]),
  setPolicy: z.tuple([z.enum(POLICY_NAMES), knobs.optional()]),
  setPolicyParams: z.tuple([knobs]),
  killJob: z.tuple([jobId]),
  pauseJob: z.tuple([jobId]),
  resumeJob: z.tuple([jobId]),
  setPriority: z.tuple([jobId, z.number().finite().min(-1e6).max(1e6)]),
  launchJob: z.tuple([z.object({
    file: absolutePath,
    name: z.string().max(256).optional(),
    args: z.array(z.string().max(4096)).max(256).optional(),
    hints: jobHintsSchema.optional(),
  }).strict()]),
  uploadJob: z.tuple([
    z.string().min(1).max(255).regex(/^[^/\\\0]+\.m?js$/i, 'a file name (no folders) ending in .js or .mjs'),
    z.string().max(16 * 1024 * 1024),
  ]),
  jobOutput: z.tuple([jobId]),
  exampleJobs: z.tuple([]),
  clusterJobs: z.tuple([]),
  killClusterJob: z.tuple([z.string().regex(SLURM_JOB_ID, 'a Slurm job id')]),
  checkJobFile: z.tuple([absolutePath]),
  connectionState: z.tuple([]),
  serviceStatus: z.tuple([]),
} satisfies Record<InvokeMethod, z.ZodType<unknown[]>>;

type Args<M extends InvokeMethod> = z.infer<(typeof INVOKE_SCHEMAS)[M]>;

/** What answers each invoke method, given validated arguments. */
export type InvokeHandlers = { [M in InvokeMethod]: (...args: Args<M>) => unknown };

/** The parts of an `IpcMainInvokeEvent` the gate reads. */
export interface InvokeEventLike {
  sender: { id: number };
  senderFrame: { url: string; parent: unknown } | null;
}

/** The part of `ipcMain` used here. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: InvokeEventLike, ...args: unknown[]) => unknown): void;
}

/**
 * Why `event` must be refused, or null when it comes from the main frame of
 * the web contents `trustedId()` names (our window), showing an app:// URL.
 */
export function senderRefusal(event: InvokeEventLike, trustedId: () => number | null): string | null {
  const id = trustedId();
  if (id === null || event.sender.id !== id) return 'a web contents that is not the Salus window';
  const frame = event.senderFrame;
  if (!frame) return 'a frame that is gone';
  if (frame.parent !== null) return 'a subframe';
  if (!isAppUrl(frame.url)) return `a page that is not the Salus panel (${frame.url.slice(0, 200)})`;
  return null;
}

/** Registers a handler per invoke method behind the sender check and the argument schemas. */
export function setupIpc({ ipcMain, trustedWebContentsId, handlers }: {
  ipcMain: IpcMainLike;
  trustedWebContentsId: () => number | null;
  handlers: InvokeHandlers;
}): void {
  for (const method of Object.keys(INVOKE_SCHEMAS) as InvokeMethod[]) {
    const schema: z.ZodType<unknown[]> = INVOKE_SCHEMAS[method];
    const handler = handlers[method] as (...args: unknown[]) => unknown;
    ipcMain.handle(invokeChannel(method), async (event, ...args) => {
      const refusal = senderRefusal(event, trustedWebContentsId);
      if (refusal) throw new Error(`salus: ${method} refused: the call came from ${refusal}`);
      const parsed = schema.safeParse(args);
      if (!parsed.success) throw new Error(`salus: ${method}: invalid arguments: ${describeZodError(parsed.error)}`);
      return handler(...parsed.data);
    });
  }
}

/** What the handlers forward to. */
export interface HandlerDeps {
  client: { state: ConnectionState; call<T = unknown>(method: BridgeMethod, ...params: unknown[]): Promise<T> };
  supervisor: { status: ServiceStatus };
}

/** The desktop's handlers: SalusApi calls go to the service; the rest are answered here. */
export function createInvokeHandlers({ client, supervisor }: HandlerDeps): InvokeHandlers {
  const done = async (promise: Promise<unknown>): Promise<void> => { await promise; };
  return {
    snapshot: () => client.call('snapshot'),
    setPolicy: (name, params) => (params ? client.call('setPolicy', name, params) : client.call('setPolicy', name)),
    setPolicyParams: (params) => client.call('setPolicyParams', params),
    killJob: (id) => done(client.call('killJob', id)),
    pauseJob: (id) => done(client.call('pauseJob', id)),
    resumeJob: (id) => done(client.call('resumeJob', id)),
    setPriority: (id, priority) => done(client.call('setPriority', id, priority)),
    // The service runs on this machine: the main process checks the file before the service spawns it.
    launchJob: async (request) => client.call('launchJob', { ...request, file: await checkJobFile(request.file) }),
    uploadJob: (fileName, source) => client.call('uploadJob', fileName, source),
    jobOutput: (id) => client.call('jobOutput', id),
    exampleJobs: () => client.call('exampleJobs'),
    clusterJobs: () => client.call('clusterJobs'),
    killClusterJob: (id) => done(client.call('killClusterJob', id)),
    checkJobFile: (path) => checkJobFile(path),
    connectionState: () => client.state,
    serviceStatus: () => supervisor.status,
  };
}
