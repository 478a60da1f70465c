/**
 * Control calls: what `salus jobs|memory|policy|kill|pause|resume`, the
 * Electron main process and the web panel may ask of the service. Each method
 * validates its parameters and answers JSON, or throws ControlError with a
 * message meant for the person who asked.
 */
import { z } from 'zod';
import { POLICY_NAMES, type PolicyName } from '../protocol/state.js';
import { describeZodError, ErrorCode, jobHintsSchema } from '../protocol/messages.js';
import { ControlError, type SalusService } from './service.js';
import { listExampleJobs } from './examples.js';
import type { JobLauncher, LaunchCaller } from './launcher.js';
import { historyFilterSchema, listHistory } from '../history/control.js';
import { cancelSlurmJob, clusterJobsAnswer } from '../cluster/clusterJobs.js';
import { SLURM_JOB_ID } from '../protocol/cluster.js';

const jobId = z.string().min(1).max(64);
const slurmJobId = z.string().regex(SLURM_JOB_ID, 'a Slurm job id (digits, or ARRAY_TASK)');
const params = z.record(z.string(), z.union([z.number(), z.boolean()]));
const policyName = z.string().max(64).transform((name, ctx) => {
  const upper = name.toUpperCase();
  if ((POLICY_NAMES as readonly string[]).includes(upper)) return upper as PolicyName;
  ctx.addIssue({ code: 'custom', message: `unknown policy '${name}': one of ${POLICY_NAMES.join(', ')}` });
  return z.NEVER;
});

const methods = {
  snapshot: { params: z.tuple([]), run: (s: SalusService) => s.snapshot() },
  jobs: { params: z.tuple([]), run: (s: SalusService) => s.jobInfos() },
  memory: { params: z.tuple([]), run: (s: SalusService) => s.memoryMap() },
  policy: { params: z.tuple([]), run: (s: SalusService) => s.policyInfo() },
  setPolicy: {
    params: z.tuple([policyName, params.optional()]),
    run: (s: SalusService, [name, p]: [PolicyName, Record<string, number | boolean>?]) => s.setPolicy(name, p),
  },
  setPolicyParams: { params: z.tuple([params]), run: (s: SalusService, [p]: [Record<string, number | boolean>]) => s.setPolicyParams(p) },
  killJob: { params: z.tuple([jobId]), run: (s: SalusService, [id]: [string]) => { s.kill(id); return null; } },
  pauseJob: { params: z.tuple([jobId]), run: (s: SalusService, [id]: [string]) => { s.pause(id); return null; } },
  resumeJob: { params: z.tuple([jobId]), run: (s: SalusService, [id]: [string]) => { s.resume(id); return null; } },
  setPriority: { params: z.tuple([jobId, z.number().finite()]), run: (s: SalusService, [id, p]: [string, number]) => { s.setPriority(id, p); return null; } },
  jobOutput: { params: z.tuple([jobId]), run: (s: SalusService, [id]: [string]) => s.jobOutput(id) },
  exampleJobs: { params: z.tuple([]), run: () => listExampleJobs() },
  clusterJobs: { params: z.tuple([]), run: () => clusterJobsAnswer() },
  killClusterJob: { params: z.tuple([slurmJobId]), run: async (_s: SalusService, [id]: [string]) => { await cancelSlurmJob(id); return null; } },
  history: { params: z.tuple([historyFilterSchema.optional()]), run: (s: SalusService, [filter]: [z.infer<typeof historyFilterSchema>?]) => listHistory(s, filter ?? {}) },
  appendOutput: {
    params: z.tuple([z.number().int().positive(), z.string().max(1024 * 1024)]),
    run: (s: SalusService, [pid, text]: [number, string]) => { s.appendOutputOfPid(pid, text); return null; },
  },
  reportExit: {
    params: z.tuple([z.number().int().positive(), z.number().int().nullable(), z.string().nullable()]),
    run: (s: SalusService, [pid, code, signal]: [number, number | null, string | null]) => { s.reportExit(pid, code, signal); return null; },
  },
} as const;

const launchSchema = z.object({
  file: z.string().min(1).max(4096),
  name: z.string().max(256).optional(),
  args: z.array(z.string().max(4096)).max(256).optional(),
  hints: jobHintsSchema.optional(),
});

/** Names of every control method (for `salus` and the bridge). */
export const CONTROL_METHODS = [...Object.keys(methods), 'launchJob', 'uploadJob'];

/**
 * Runs one control call; throws ControlError for bad input or an impossible
 * request. `caller` says where it came from: launches from the web panel are
 * confined (see `JobLauncher.launch`).
 */
export async function runControl(service: SalusService, launcher: JobLauncher | null, method: string, raw: unknown[], caller: LaunchCaller = 'local'): Promise<unknown> {
  if (method === 'launchJob' || method === 'uploadJob') {
    if (!launcher) throw new ControlError('this service does not launch jobs', ErrorCode.NotAllowed);
    if (method === 'launchJob') {
      const request = parse(launchSchema, raw[0], method);
      return launcher.launch(request, caller);
    }
    const [fileName, source] = parse(z.tuple([z.string().min(1).max(255), z.string().max(16 * 1024 * 1024)]), raw, method);
    return launcher.store(fileName, source);
  }
  const entry = (methods as Record<string, { params: z.ZodType; run: (s: SalusService, p: any) => unknown }>)[method];
  if (!entry) throw new ControlError(`unknown method '${method}'; known: ${CONTROL_METHODS.join(', ')}`, ErrorCode.UnknownMethod);
  return entry.run(service, parse(entry.params, raw, method));
}

function parse<T>(schema: z.ZodType<T>, value: unknown, method: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A check written for people (e.g. an unknown policy) speaks for itself; the rest name the method and field.
  const forPeople = result.error.issues.find((issue) => issue.code === 'custom');
  throw new ControlError(forPeople ? forPeople.message : `${method}: ${describeZodError(result.error)}`);
}
