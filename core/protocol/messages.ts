/**
 * Envelopes on the service socket (one per frame header), shared by the server
 * and every client. The first frame a client sends is `hello`, carrying
 * PROTOCOL_VERSION; the service answers `welcome` or an `error` and hangs up.
 */
import { z } from 'zod';
import type { GpuErrorJson } from './commands.js';
import type { ServiceEvent } from './api.js';
import type { GpuInfo, JobState } from './state.js';
import { compileFastCheck } from './fastCheck.js';

/** Bumped on every incompatible change of frames, envelopes or commands. */
export const PROTOCOL_VERSION = 2;

/** Error codes of `error` frames and failed replies; named, grouped by range. */
export const ErrorCode = {
  /** 1xx: the peer broke the protocol. */
  BadFrame: 100,
  BadMessage: 101,
  VersionMismatch: 102,
  NotAllowed: 103,
  UnknownMethod: 104,
  /** The peer passed one of the service's limits on what a connection may hold (README "Limits"). */
  LimitExceeded: 105,
  /** 2xx: the request was understood but cannot be done. */
  NotFound: 200,
  Refused: 201,
  InvalidArgument: 202,
  /** 5xx: the service failed. */
  Internal: 500,
} as const;

const hints = z.object({
  iterations: z.number().int().positive().optional(),
  persistentBytes: z.number().int().nonnegative().optional(),
  ephemeralBytes: z.number().int().nonnegative().optional(),
  priority: z.number().finite().optional(),
  durationMs: z.number().finite().nonnegative().optional(),
  share: z.number().finite().positive().optional(),
}).strict();

export const helloSchema = z.object({
  t: z.literal('hello'),
  protocol: z.number().int(),
  role: z.enum(['job', 'control']),
  name: z.string().max(256).optional(),
  pid: z.number().int().positive().optional(),
  hints: hints.optional(),
  /** The job's module and arguments, as its process started (for its history); kept well under the pre-hello frame limit. */
  file: z.string().max(4096).optional(),
  args: z.array(z.string().max(1024)).max(32).optional(),
  /** `sdk` when the job marks its iterations itself. */
  iterationSource: z.enum(['sdk', 'inferred']).optional(),
});
export type Hello = z.infer<typeof helloSchema>;

/** Job → service messages after hello. */
export const jobMessageSchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('batch'), cmds: z.array(z.unknown()).max(1_000_000) }),
  z.object({
    t: z.literal('requestDevice'), rid: z.number().int().positive(),
    requiredFeatures: z.array(z.string().max(128)).max(256).optional(),
    requiredLimits: z.record(z.string(), z.number()).optional(),
  }),
  z.object({ t: z.literal('hints'), hints }),
  z.object({ t: z.literal('goodbye'), exitCode: z.number().int() }),
]);
export type JobMessage = z.infer<typeof jobMessageSchema>;

/** True only for a message `jobMessageSchema` accepts as it is (batches, goodbyes); false means "ask zod". */
export const isWellFormedJobMessage = compileFastCheck(jobMessageSchema) ?? (() => false);

/** Control → service: one method call. */
export const callSchema = z.object({
  t: z.literal('call'),
  rid: z.number().int().positive(),
  method: z.string().max(64),
  params: z.array(z.unknown()).max(64).default([]),
});
export type Call = z.infer<typeof callSchema>;

/** What the service says about its adapter to a job (enough to build GPUAdapter). */
export interface AdapterDescription {
  info: GpuInfo;
  limits: Record<string, number>;
  features: string[];
  /** `navigator.gpu.wgslLanguageFeatures` of the service's WebGPU. */
  wgslLanguageFeatures?: string[];
}

/** Service → client envelopes. */
export type ServerMessage =
  | { t: 'welcome'; protocol: number; jobId?: string; adapter: AdapterDescription; version: string; bulkDir?: string | null }
  | { t: 'reply'; rid: number; result?: unknown; error?: { code: number; message: string; gpu?: GpuErrorJson; name?: string } }
  /** An error none of device `device`'s scopes captured (ids as in `configureDevice`). */
  | { t: 'uncaptured'; error: GpuErrorJson; device: number }
  | { t: 'lost'; reason: 'destroyed' | 'unknown'; message: string }
  | { t: 'state'; state: JobState; message?: string }
  | { t: 'event'; event: ServiceEvent }
  | { t: 'error'; code: number; message: string };

/** Formats a zod error as one line a person can act on. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(message)'}: ${issue.message}`)
    .join('; ');
}

export { hints as jobHintsSchema };
