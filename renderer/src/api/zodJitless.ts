/**
 * Imported before the call table (core/protocol/calls.ts) is: the panel's page
 * forbids eval (its Content-Security-Policy), and zod otherwise probes for it
 * with `new Function` while it builds object schemas, which Chromium reports
 * as a CSP violation in the console. The panel only reads the table's names;
 * it never validates with it.
 */
import { config } from 'zod';

config({ jitless: true });
