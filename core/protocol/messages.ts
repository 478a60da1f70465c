/**
 * Envelopes on the service socket (one per frame header), shared by the server
 * and every client. The first frame a client sends is `hello`, carrying
 * PROTOCOL_VERSION; the service answers `welcome` or an `error` and hangs up.
 */
import { z } from 'zod';
import type { GpuErrorJson } from './commands.js';
import type { DecodedBatch } from './commandCodec.js';
import type { ServiceEvent } from './api.js';
import type { GpuInfo, JobState } from './state.js';

/** Bumped on every incompatible change of frames, envelopes or commands (3: binary command streams; 4: readbacks into the scratch ring). */
export const PROTOCOL_VERSION = 4;

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
  gpu: z.string().min(1).max(64).optional(),
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

/**
 * Job → service messages after hello, as they arrive. A batch's payload starts
 * with its `commandBytes`-byte command stream (core/protocol/commandCodec.ts);
 * the rest is its data section, which commands point into. `scratchBytes`: how
 * many bytes of the job's scratch file its commands name; once the batch is
 * replayed the service says so (`scratchRead`), and the job may write there again.
 */
export const jobMessageSchema = z.discriminatedUnion('t', [
  z.object({
    t: z.literal('batch'),
    commandBytes: z.number().int().nonnegative().max(0xffffffff),
    scratchBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
  }),
  z.object({
    t: z.literal('requestDevice'), rid: z.number().int().positive(),
    requiredFeatures: z.array(z.string().max(128)).max(256).optional(),
    requiredLimits: z.record(z.string(), z.number()).optional(),
  }),
  z.object({ t: z.literal('hints'), hints }),
  z.object({ t: z.literal('goodbye'), exitCode: z.number().int() }),
]);
export type JobWireMessage = z.infer<typeof jobMessageSchema>;
/** A job's message as the service handles it: a batch's command stream decoded and checked. */
export type JobMessage = Exclude<JobWireMessage, { t: 'batch' }> | { t: 'batch'; batch: DecodedBatch };

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
  /** The batches sent so far that named `bytes` of the job's scratch file are replayed: that space is free again. */
  | { t: 'scratchRead'; bytes: number }
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
