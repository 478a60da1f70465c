/**
 * The IPC gate: one `ipcMain.handle` per invoke method. Every call is refused
 * unless it comes from our window's main frame showing our own app URL, and
 * its arguments are validated with zod before anything is forwarded — the
 * renderer is treated as untrusted input, as Electron's security checklist
 * asks (https://www.electronjs.org/docs/latest/tutorial/security#17-validate-the-sender-of-all-ipc-messages).
 */
import { z } from 'zod';
import { describeZodError } from '../core/protocol/messages.js';
import { CONTROL_CALLS, PANEL_CALL_NAMES, type CallArgs, type PanelCallName } from '../core/protocol/calls.js';
import type { ConnectionState } from '../core/protocol/api.js';
import type { BridgeMethod } from '../core/protocol/bridge.js';
import { isAppUrl } from './appProtocol.js';
import { invokeChannel, type DesktopMethod, type InvokeMethod, type ServiceStatus } from './desktopApi.js';
import { checkJobFile } from './jobFiles.js';

const absolutePath = z.string().min(1).max(4096).refine((value) => !value.includes('\0'), 'a path without NUL characters');

/** The arguments of the methods main answers itself. */
const DESKTOP_SCHEMAS = {
  checkJobFile: z.tuple([absolutePath]),
  connectionState: z.tuple([]),
  serviceStatus: z.tuple([]),
} satisfies Record<DesktopMethod, z.ZodType<unknown[]>>;

type Args<M extends InvokeMethod> = M extends PanelCallName ? CallArgs<M> : M extends DesktopMethod ? z.output<(typeof DESKTOP_SCHEMAS)[M]> : never;

/**
 * The arguments each invoke method accepts; anything else is refused. The
 * panel's calls take their schemas from the call table (core/protocol/calls.ts).
 */
export const INVOKE_SCHEMAS: Record<InvokeMethod, z.ZodType<unknown[]>> = {
  ...Object.fromEntries(PANEL_CALL_NAMES.map((method) => [method, CONTROL_CALLS[method].params])) as unknown as Record<PanelCallName, z.ZodType<unknown[]>>,
  ...DESKTOP_SCHEMAS,
};

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

/** Arguments as sent: trailing `undefined`s dropped (JSON would turn them into nulls, which optional parameters refuse). */
export function sentArgs(args: readonly unknown[]): unknown[] {
  let end = args.length;
  while (end > 0 && args[end - 1] === undefined) end -= 1;
  return args.slice(0, end);
}

/** The desktop's handlers: SalusApi calls go to the service; the rest are answered here. */
export function createInvokeHandlers({ client, supervisor }: HandlerDeps): InvokeHandlers {
  // Calls without a result answer null over the socket; the panel's API says undefined.
  const forward = (method: BridgeMethod) => async (...args: unknown[]) => (await client.call(method, ...sentArgs(args))) ?? undefined;
  const forwarded = Object.fromEntries(PANEL_CALL_NAMES.map((method) => [method, forward(method)])) as {
    [M in PanelCallName]: (...args: CallArgs<M>) => unknown;
  };
  return {
    ...forwarded,
    // The service runs on this machine: the main process checks the file before the service spawns it.
    launchJob: async (request) => client.call('launchJob', { ...request, file: await checkJobFile(request.file) }),
    checkJobFile: (path) => checkJobFile(path),
    connectionState: () => client.state,
    serviceStatus: () => supervisor.status,
  };
}
