/**
 * Every control call, defined once: its name, its parameters (a zod tuple, as
 * the arguments travel) and its result type. `SalusApi` (api.ts), the service's
 * control handlers (core/service/control.ts), the WebSocket bridge, Electron's
 * IPC gate and preload, and the panel's web client are all derived from this
 * table, so adding a panel action means one entry here, its handler in
 * core/service/control.ts, and the component that calls it.
 *
 * Arguments are validated with these schemas by whoever receives them from
 * outside (the service's socket, the bridge, the IPC gate); the TypeScript
 * signatures callers see are the schemas' outputs.
 */
import { z } from 'zod';
import type { ClusterJobs } from './cluster.js';
import { SLURM_JOB_ID } from './cluster.js';
import type { HistoryEntry } from './history.js';
import { jobHintsSchema } from './messages.js';
import {
  POLICY_NAMES, type JobInfo, type MemoryMap, type PolicyInfo, type PolicyName, type ServiceSnapshot,
} from './state.js';

/** A call's definition: its parameter schema, whether the panel may make it, and (as a type only) its result. */
export interface CallDefinition<Params extends z.ZodType<unknown[]> = z.ZodType<unknown[]>, Panel extends boolean = boolean, Result = unknown> {
  params: Params;
  /** Part of `SalusApi`: the panel may make it (over IPC or the bridge); otherwise only the socket's control clients may. */
  panel: Panel;
  /** Never set: carries the result type. */
  readonly result?: Result;
}

/** Defines a call answering `Result`: `call<Result>()(params, PANEL or CONTROL_ONLY)`. */
function call<Result>() {
  return <Params extends z.ZodType<unknown[]>, Panel extends boolean>(params: Params, panel: Panel): CallDefinition<Params, Panel, Result> => ({ params, panel });
}

const PANEL = true;
const CONTROL_ONLY = false;

const jobId = z.string().min(1).max(64);
const knobs = z.record(z.string().min(1).max(64), z.union([z.number().finite(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= 64, 'at most 64 knobs');
const filePath = z.string().min(1).max(4096).refine((value) => !value.includes('\0'), 'a path without NUL characters');
/** Policy names as a person types them: `fair` is FAIR. */
const policyName = z.string().max(64).transform((name, ctx) => {
  const upper = name.toUpperCase();
  if ((POLICY_NAMES as readonly string[]).includes(upper)) return upper as PolicyName;
  ctx.addIssue({ code: 'custom', message: `unknown policy '${name}': one of ${POLICY_NAMES.join(', ')}` });
  return z.NEVER;
});
/** Priorities are bounded so that ranking arithmetic stays exact. */
const priority = z.number().finite().min(-1e6).max(1e6);
/** A job's weight of GPU time under FAIR: above 0, at most 1e6. */
const share = z.number().finite().positive().max(1e6);

/** What to launch: a job file the service can read, with the same options as `salus run`. Unknown fields are refused. */
export const launchRequestSchema = z.object({
  /** Path of the job's ES module on the service's machine (see `uploadJob` for browsers). */
  file: filePath,
  name: z.string().max(256).optional(),
  args: z.array(z.string().max(4096)).max(256).optional(),
  hints: jobHintsSchema.optional(),
}).strict();

/** What to launch (the one LaunchRequest type of the code base). */
export type LaunchRequest = z.output<typeof launchRequestSchema>;

const JOB_STATES = ['queued', 'running', 'paused', 'done', 'failed', 'killed'] as const;

/** `salus history`'s filters (protocol/history.ts's HistoryFilter), checked. */
export const historyFilterSchema = z.object({
  states: z.array(z.enum(JOB_STATES)).max(JOB_STATES.length).optional(),
  name: z.string().min(1).max(256).optional(),
  sinceMs: z.number().finite().optional(),
  limit: z.number().int().positive().max(100_000).optional(),
}).strict();

/** An example job that ships with Salus (assets/jobs), offered by the Launch sheet. */
export interface ExampleJob {
  /** The file's name without `.js`, used as the job's name. */
  name: string;
  /** Its path on the service's machine, for `launchJob`. */
  file: string;
  /** One sentence from the file's header. */
  description: string;
}

/** The table. Each entry's JSDoc is the method's contract in `SalusApi`. */
export const CONTROL_CALLS = {
  /** The full state now. */
  snapshot: call<ServiceSnapshot>()(z.tuple([]), PANEL),
  /** The job table (`salus jobs --json`). */
  jobs: call<JobInfo[]>()(z.tuple([]), CONTROL_ONLY),
  /** The memory map (`salus memory --json`). */
  memory: call<MemoryMap>()(z.tuple([]), CONTROL_ONLY),
  /** The policy and its knobs (`salus policy --json`). */
  policy: call<PolicyInfo>()(z.tuple([]), CONTROL_ONLY),
  /** Switches the policy, keeping knobs not given. Applies at the next iteration boundary. */
  setPolicy: call<PolicyInfo>()(z.tuple([policyName, knobs.optional()]), PANEL),
  /** Changes knobs of the current policy. */
  setPolicyParams: call<PolicyInfo>()(z.tuple([knobs]), PANEL),
  /** Ends a job; its memory returns at once. */
  killJob: call<void>()(z.tuple([jobId]), PANEL),
  /** Holds a running job at its next iteration boundary. */
  pauseJob: call<void>()(z.tuple([jobId]), PANEL),
  /** Lets a paused job run again. */
  resumeJob: call<void>()(z.tuple([jobId]), PANEL),
  /** Changes a job's priority (PRIORITY ranks by it; -1e6 to 1e6). */
  setPriority: call<void>()(z.tuple([jobId, priority]), PANEL),
  /** Changes a job's share of GPU time (FAIR divides GPU time in proportion to shares; above 0, at most 1e6). */
  setShare: call<void>()(z.tuple([jobId, share]), PANEL),
  /** Starts a job process on the service's machine; resolves with its job id. */
  launchJob: call<{ jobId: string }>()(z.tuple([launchRequestSchema]), PANEL),
  /** Stores a job file's text in the service's jobs folder; resolves with the path to launch. */
  uploadJob: call<{ file: string }>()(z.tuple([
    z.string().min(1).max(255).regex(/^[^/\\\0]+\.m?js$/i, 'a file name (no folders) ending in .js or .mjs'),
    z.string().max(16 * 1024 * 1024),
  ]), PANEL),
  /** The job's captured output so far (stdout and stderr, interleaved). */
  jobOutput: call<string>()(z.tuple([jobId]), PANEL),
  /** The example jobs on the service's machine, ready for `launchJob`. */
  exampleJobs: call<ExampleJob[]>()(z.tuple([]), PANEL),
  /**
   * The cluster's Salus jobs from Slurm, as `salus jobs --cluster --json` lists
   * them, asked where the service runs; `{available: false, reason}` where that
   * machine has no Slurm.
   */
  clusterJobs: call<ClusterJobs>()(z.tuple([]), PANEL),
  /** Ends a Slurm job (its Slurm id) with `scancel`, or slurmrestd where one is configured. */
  killClusterJob: call<void>()(z.tuple([z.string().regex(SLURM_JOB_ID, 'a Slurm job id (digits, or ARRAY_TASK)')]), PANEL),
  /** `salus history`: recorded jobs of every run, newest first. */
  history: call<HistoryEntry[]>()(z.tuple([historyFilterSchema.optional()]), CONTROL_ONLY),
  /** `salus run` relays its job's output (by the job's process id). */
  appendOutput: call<void>()(z.tuple([z.number().int().positive(), z.string().max(1024 * 1024)]), CONTROL_ONLY),
  /** `salus run` reports its job's process exit: pid, exit code, signal. */
  reportExit: call<void>()(z.tuple([z.number().int().positive(), z.number().int().nullable(), z.string().nullable()]), CONTROL_ONLY),
} satisfies Record<string, CallDefinition>;

type Calls = typeof CONTROL_CALLS;

/** The name of any control call. */
export type CallName = keyof Calls;

/** The arguments of call `M`, after validation. */
export type CallArgs<M extends CallName> = z.output<Calls[M]['params']>;

/** The result of call `M`. */
export type CallResult<M extends CallName> = Exclude<Calls[M]['result'], undefined>;

/** Calls the panel may make (`SalusApi`'s request methods). */
export type PanelCallName = { [M in CallName]: Calls[M]['panel'] extends true ? M : never }[CallName];

/** Every call name, in table order. */
export const CALL_NAMES = Object.keys(CONTROL_CALLS) as CallName[];

/** The panel's calls, in table order. */
export const PANEL_CALL_NAMES = CALL_NAMES.filter((name) => CONTROL_CALLS[name].panel) as PanelCallName[];

/** Whether `name` names a control call. */
export function isCallName(name: unknown): name is CallName {
  return typeof name === 'string' && Object.hasOwn(CONTROL_CALLS, name);
}

/** One async method per panel call, as `SalusApi` and its hosts expose them. */
export type PanelMethods = { [M in PanelCallName]: (...args: CallArgs<M>) => Promise<CallResult<M>> };
