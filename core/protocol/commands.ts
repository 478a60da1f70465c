/**
 * The GPU commands a job sends, as both ends use them: the command table
 * (commandTable.ts) defines them once; the binary stream they travel in is
 * commandCodec.ts. This module gathers what the client and the executor share
 * besides: the size of data pieces, request ids, and WebGPU errors as they cross.
 */
export { COMMANDS, REQUEST_OPS, type Command, type CommandOf, type CommandOp, type DataRef } from './commandTable.js';

/**
 * Largest piece of buffer data in one command or reply. Bigger uploads, mapped
 * writes and mapped reads travel as several pieces, so no frame nears
 * MAX_FRAME_BYTES however large the buffer.
 */
export const DATA_CHUNK_BYTES = 32 * 1024 * 1024;

/**
 * Whether `value` is a request id as commands carry it (a positive safe integer). Only those are
 * answered, and counted as awaiting an answer: a reply to `Infinity` or `0.5` would reach no caller.
 */
export function isRequestId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

/** The WebGPU error types as they cross the wire. */
export type GpuErrorType = 'validation' | 'out-of-memory' | 'internal';

/** A WebGPU error for a job: its class and message. */
export interface GpuErrorJson {
  type: GpuErrorType;
  message: string;
}
