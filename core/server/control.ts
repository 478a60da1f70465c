/**
 * Control calls: what `salus jobs|memory|policy|kill|pause|resume`, the
 * Electron main process and the web panel may ask of the service. Each method
 * validates its parameters and answers JSON, or throws ControlError with a
 * message meant for the person who asked.
 */
import type { z } from 'zod';
import { CALL_NAMES, CONTROL_CALLS, isCallName, type CallArgs, type CallName, type CallResult } from '../protocol/calls.js';
import { describeZodError, ErrorCode } from '../protocol/messages.js';
import { ControlError, type SalusService } from './service.js';
import { listExampleJobs } from './examples.js';
import type { JobLauncher, LaunchCaller } from './launcher.js';
import { listHistory } from '../history/control.js';
import { cancelSlurmJob, clusterJobsAnswer } from '../cluster/clusterJobs.js';

/** Who a handler works for: the service, its launcher (null: it launches nothing) and where the call came from. */
export interface ControlContext {
  service: SalusService;
  launcher: JobLauncher | null;
  caller: LaunchCaller;
}

/** One handler per call of core/protocol/calls.ts, given validated arguments. */
export type ControlHandlers = { [M in CallName]: (context: ControlContext, ...args: CallArgs<M>) => CallResult<M> | Promise<CallResult<M>> };

function launcherOf(context: ControlContext): JobLauncher {
  if (!context.launcher) throw new ControlError('this service does not launch jobs', ErrorCode.NotAllowed);
  return context.launcher;
}

/** What each control call does. */
export const CONTROL_HANDLERS: ControlHandlers = {
  snapshot: ({ service }) => service.snapshot(),
  jobs: ({ service }) => service.jobInfos(),
  memory: ({ service }) => service.memoryMap(),
  policy: ({ service }) => service.policyInfo(),
  setPolicy: ({ service }, name, params) => service.setPolicy(name, params),
  setPolicyParams: ({ service }, params) => service.setPolicyParams(params),
  killJob: ({ service }, id) => service.kill(id),
  pauseJob: ({ service }, id) => service.pause(id),
  resumeJob: ({ service }, id) => service.resume(id),
  setPriority: ({ service }, id, priority) => service.setPriority(id, priority),
  // Launches from the web panel are confined (see `JobLauncher.launch`).
  launchJob: (context, request) => launcherOf(context).launch(request, context.caller),
  uploadJob: (context, fileName, source) => launcherOf(context).store(fileName, source),
  jobOutput: ({ service }, id) => service.jobOutput(id),
  exampleJobs: () => listExampleJobs(),
  clusterJobs: () => clusterJobsAnswer(),
  killClusterJob: async (_context, id) => { await cancelSlurmJob(id); },
  history: ({ service }, filter) => listHistory(service, filter ?? {}),
  appendOutput: ({ service }, pid, text) => service.appendOutputOfPid(pid, text),
  reportExit: ({ service }, pid, code, signal) => service.reportExit(pid, code, signal),
};

/** Names of every control method (for `salus` and the bridge). */
export const CONTROL_METHODS: readonly string[] = CALL_NAMES;

/**
 * Runs one control call; throws ControlError for bad input or an impossible
 * request. `caller` says where it came from: launches from the web panel are
 * confined (see `JobLauncher.launch`).
 */
export async function runControl(service: SalusService, launcher: JobLauncher | null, method: string, raw: unknown[], caller: LaunchCaller = 'local'): Promise<unknown> {
  if (!isCallName(method)) throw new ControlError(`unknown method '${method}'; known: ${CALL_NAMES.join(', ')}`, ErrorCode.UnknownMethod);
  const args = parse(CONTROL_CALLS[method].params, raw, method);
  const handler = CONTROL_HANDLERS[method] as (context: ControlContext, ...args: unknown[]) => unknown;
  return handler({ service, launcher, caller }, ...args);
}

function parse(schema: z.ZodType<unknown[]>, value: unknown, method: string): unknown[] {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A check written for people (e.g. an unknown policy) speaks for itself; the rest name the method and field.
  const forPeople = result.error.issues.find((issue) => issue.code === 'custom');
  throw new ControlError(forPeople ? forPeople.message : `${method}: ${describeZodError(result.error)}`);
}
