/**
 * The main process's check of a job file named by the renderer (a dropped
 * file's path, or a launch request's `file`): the renderer is not trusted to
 * say what is on disk, so the path must be absolute, exist, be a regular file
 * (after symlinks) and end in .js or .mjs, like every job `salus run` takes.
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute } from 'node:path';

const JOB_FILE = /\.m?js$/i;

/** Resolves with the file's real path, or rejects with one sentence saying what is wrong. */
export async function checkJobFile(path: string): Promise<string> {
  if (!isAbsolute(path)) throw new Error(`'${path}' is not an absolute path to a job file`);
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new Error(`${path} does not exist`);
  }
  if (!(await stat(real)).isFile()) throw new Error(`${path} is not a file`);
  if (!JOB_FILE.test(path) || !JOB_FILE.test(real)) throw new Error(`${path} is not a job file: a job is a .js or .mjs ES module`);
  return real;
}
