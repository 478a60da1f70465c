/**
 * Turns the launch sheet's draft into a `LaunchRequest`: arguments split like a
 * shell would, numbers checked, empty fields left out so the service measures
 * what the user did not declare.
 */
import type { LaunchRequest } from '../../../core/protocol/api.js';
import type { LaunchDraft } from './uiSlice.js';

/**
 * Splits a command line into arguments: whitespace separates, single quotes
 * keep text literally, double quotes group words and allow `\"`, a backslash
 * outside quotes escapes the next character. Throws on an unclosed quote.
 */
export function splitArgs(line: string): string[] {
  const args: string[] = [];
  let current = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = null;
      else current += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = null;
      else if (ch === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) current += line[++i];
      else current += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) args.push(current);
      current = '';
      inWord = false;
    } else {
      current += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`Unclosed ${quote === '"' ? 'double' : 'single'} quote in the arguments.`);
  if (inWord) args.push(current);
  return args;
}

/** The request for `draft` with the uploaded `file` path, or the first thing wrong with the draft. */
export function buildLaunchRequest(draft: LaunchDraft, file: string): { request: LaunchRequest } | { error: string } {
  const priorityText = draft.priority.trim();
  const priority = priorityText === '' ? 0 : Number(priorityText);
  if (!Number.isInteger(priority)) return { error: 'Priority must be a whole number.' };
  const iterationsText = draft.iterations.trim();
  const iterations = iterationsText === '' ? undefined : Number(iterationsText);
  if (iterations !== undefined && (!Number.isInteger(iterations) || iterations < 1)) {
    return { error: 'Iterations must be a whole number of at least 1, or empty if unknown.' };
  }
  let args: string[];
  try {
    args = splitArgs(draft.args);
  } catch (error) {
    return { error: (error as Error).message };
  }
  const request: LaunchRequest = { file, args, hints: { priority } };
  if (iterations !== undefined) request.hints = { ...request.hints, iterations };
  const name = draft.name.trim();
  if (name) request.name = name;
  return { request };
}

/** Whether a file name looks like a job the service can run (an ES module). */
export function isJobFileName(fileName: string): boolean {
  return /\.(m?js)$/i.test(fileName);
}
