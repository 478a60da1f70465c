/**
 * The example jobs shipped in assets/jobs, which the panel's Launch sheet
 * offers so that a first job is one click away. A file is an example when its
 * header comment starts with `Example job:`; the sentence after it describes it
 * (helper modules beside the examples have no such header).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExampleJob } from '../protocol/api.js';
import { EXAMPLE_JOBS_DIR } from './launcher.js';

/** The longest description kept, in characters. */
const DESCRIPTION_MAX_CHARS = 200;

/** The examples in `dir` (assets/jobs, unpacked beside app.asar in the desktop app), by name; empty when the folder is missing. */
export function listExampleJobs(dir = EXAMPLE_JOBS_DIR): ExampleJob[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => /\.m?js$/.test(name)).sort();
  } catch {
    return [];
  }
  const examples: ExampleJob[] = [];
  for (const fileName of names) {
    const file = join(dir, fileName);
    const description = describe(readFileSync(file, 'utf8').slice(0, 4096));
    if (description !== null) examples.push({ name: fileName.replace(/\.m?js$/, ''), file, description });
  }
  return examples;
}

/** The first sentence after `Example job:` in the file's leading comment, or null when it has none. */
function describe(head: string): string | null {
  const comment = /^\s*\/\*\*([\s\S]*?)\*\//.exec(head)?.[1];
  if (!comment) return null;
  const text = comment.split('\n').map((line) => line.replace(/^\s*\*\s?/, '').trim()).join(' ').replace(/\s+/g, ' ').trim();
  const match = /^Example job:\s*(.+?\.)(?:\s|$)/.exec(text) ?? /^Example job:\s*(.+)$/.exec(text);
  if (!match) return null;
  const sentence = match[1].replace(/`/g, '');
  return sentence.length > DESCRIPTION_MAX_CHARS ? `${sentence.slice(0, DESCRIPTION_MAX_CHARS - 1)}…` : sentence;
}
