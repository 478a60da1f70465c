/**
 * The sbatch script of `salus submit`: Slurm's directives (share of the GPU,
 * partition, time, output, name, and the `salus` comment that marks the job as
 * ours), then `salus run FILE` against the Salus service of the node Slurm
 * chose. The script says first which node and socket it uses, so a job that
 * finds no service there fails at once with both named in its output.
 */

/** The comment `salus submit` gives its Slurm jobs; `salus jobs --cluster` lists the jobs that have it. */
export const SLURM_COMMENT = 'salus';

export interface BatchScriptOptions {
  /** The job's file, absolute (the node reads it from the same path: a shared file system). */
  file: string;
  args: string[];
  /** Slurm's job name. */
  name: string;
  /** `--gres` value, e.g. `shard:2` or `gpu:1`. */
  gres: string;
  /** `--constraint`, e.g. `gpumem_80GiB|gpumem_40GiB`: nodes whose GPU is big enough. */
  constraint?: string;
  partition?: string;
  time?: string;
  /** Passed to sbatch as given (`%j` and friends are Slurm's). */
  output?: string;
  /**
   * The service's socket on the node; `%n` becomes the node's name and `%u` the
   * user's. Absent: `salus run`'s own default there (`$SALUS_SOCKET`, which sbatch
   * carries over from the submitting shell, else the user's runtime folder).
   */
  socket?: string;
  /** `salus run`'s flags for the job's hints (`--priority 2`, …). */
  runFlags: string[];
  /** How to start `salus` on the node: this installation's node and CLI, else `salus` on PATH. */
  nodePath: string;
  cliPath: string;
}

/** One word for bash, single-quoted unless it is plainly safe. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The script's text. */
export function batchScript(options: BatchScriptOptions): string {
  const directives = [
    `--job-name=${options.name}`,
    `--comment=${SLURM_COMMENT}`,
    `--gres=${options.gres}`,
    ...(options.constraint ? [`--constraint=${options.constraint}`] : []),
    ...(options.partition ? [`--partition=${options.partition}`] : []),
    ...(options.time ? [`--time=${options.time}`] : []),
    ...(options.output ? [`--output=${options.output}`] : []),
  ];
  const socketLine = options.socket === undefined
    ? 'socket="${SALUS_SOCKET:-}"'
    : `socket=${shellWord(options.socket)}\nsocket="\${socket//%n/$node}"\nsocket="\${socket//%u/\${USER:-$(id -un)}}"`;
  const run = ['run', ...(options.socket === undefined ? [] : ['--socket', '"$socket"']), '--name', shellWord(options.name), ...options.runFlags.map(shellWord), shellWord(options.file), '--', ...options.args.map(shellWord)];
  return `#!/bin/bash
# Written by \`salus submit\`: runs a job on the Salus service of the node Slurm chose.
${directives.map((d) => `#SBATCH ${shellWord(d)}`).join('\n')}
node="\${SLURMD_NODENAME:-$(hostname -s)}"
${socketLine}
if [ -x ${shellWord(options.nodePath)} ] && [ -f ${shellWord(options.cliPath)} ]; then
  salus=(${shellWord(options.nodePath)} ${shellWord(options.cliPath)})
elif command -v salus >/dev/null; then
  salus=(salus)
else
  echo "salus: Slurm job $SLURM_JOB_ID on node $node: salus is not installed there (neither ${options.cliPath.replace(/["$`\\]/g, '\\$&')} nor salus on PATH)" >&2
  exit 127
fi
echo "salus: Slurm job $SLURM_JOB_ID on node $node, Salus service at \${socket:-the default socket}" >&2
"\${salus[@]}" ${run.join(' ')}
code=$?
if [ $code -ne 0 ]; then
  echo "salus: Slurm job $SLURM_JOB_ID on node $node failed (exit code $code); every GPU node runs \\\`salus serve\\\` for its jobs (docs/slurm.md)" >&2
fi
exit $code
`;
}
