/**
 * Exit codes of `salus serve` that mean something to whoever supervises it
 * (the desktop app, systemd). Any other non-zero code is a failure a restart
 * may cure.
 */

/** No GPU driver and no software GPU: a restart will not help until the user installs one (the log says how). */
export const EXIT_NO_GPU = 4;
