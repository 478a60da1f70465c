/**
 * The control handlers: what each call of core/protocol/calls.ts does, for
 * `salus jobs|memory|policy|kill|pause|resume`, the Electron main process and
 * the web panel alike. `runControl` validates a call's arguments with the
 * table's schema, then answers JSON, or throws ControlError with a message
 * meant for the person who asked.
 */
import type { z } from 'zod';
import { CALL_NAMES, CONTROL_CALLS, isCallName, type CallArgs, type CallName, type CallResult } from '../protocol/calls.js';
import type { ClusterJobs } from '../protocol/cluster.js';
import { describeZodError, ErrorCode } from '../protocol/messages.js';
import { ControlError, type SalusService } from './service.js';
import { listExampleJobs } from './examples.js';
import type { JobLauncher, LaunchCaller } from './launcher.js';

/** The cluster's Slurm jobs, as core/cluster asks Slurm for them; given by whoever composes the service (`salus serve`). */
export interface ClusterControl {
  jobs(): Promise<ClusterJobs>;
  /** Ends a Slurm job by its Slurm id. */
  cancel(slurmJobId: string): Promise<void>;
}

/** What control calls act on. */
export interface ControlTarget {
  service: SalusService;
  /** Null: this service launches no jobs. */
  launcher: JobLauncher | null;
  cluster: ClusterControl;
}

/** Who a handler works for, and where the call came from (launches from the web panel are confined). */
export interface ControlContext extends ControlTarget {
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
  setShare: ({ service }, id, share) => service.setShare(id, share),
  // Launches from the web panel are confined (see `JobLauncher.launch`).
  launchJob: (context, request) => launcherOf(context).launch(request, context.caller),
  uploadJob: (context, fileName, source) => launcherOf(context).store(fileName, source),
  jobOutput: ({ service }, id) => service.jobOutput(id),
  exampleJobs: () => listExampleJobs(),
  clusterJobs: ({ cluster }) => cluster.jobs(),
  killClusterJob: ({ cluster }, id) => cluster.cancel(id),
  history: ({ service }, filter) => {
    if (!service.history) throw new ControlError('this service keeps no job history (its log says why when it started)', ErrorCode.NotAllowed);
    return service.history.list(filter ?? {});
  },
  appendOutput: ({ service }, pid, text) => service.appendOutputOfPid(pid, text),
  reportExit: ({ service }, pid, code, signal) => service.reportExit(pid, code, signal),
};

/**
 * Runs one control call for `target`; throws ControlError for bad input or an
 * impossible request. `caller` says where it came from: launches from the web
 * panel are confined (see `JobLauncher.launch`).
 */
export async function runControl(target: ControlTarget, method: string, raw: unknown[], caller: LaunchCaller = 'local'): Promise<unknown> {
  if (!isCallName(method)) throw new ControlError(`unknown method '${method}'; known: ${CALL_NAMES.join(', ')}`, ErrorCode.UnknownMethod);
  const args = parse(CONTROL_CALLS[method].params, raw, method);
  const handler = CONTROL_HANDLERS[method] as (context: ControlContext, ...args: unknown[]) => unknown;
  return handler({ ...target, caller }, ...args);
}

function parse(schema: z.ZodType<unknown[]>, value: unknown, method: string): unknown[] {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A check written for people (e.g. an unknown policy) speaks for itself; the rest name the method and field.
  const forPeople = result.error.issues.find((issue) => issue.code === 'custom');
  throw new ControlError(forPeople ? forPeople.message : `${method}: ${describeZodError(result.error)}`);
}
