/** Where this installation's `salus` command is, for what starts it again (systemd units, Slurm batch scripts). */
import { fileURLToPath } from 'node:url';

/** The `salus` command of this installation (bin/salus.js beside dist/). */
export const SALUS_CLI_PATH = fileURLToPath(new URL('../../../bin/salus.js', import.meta.url));
