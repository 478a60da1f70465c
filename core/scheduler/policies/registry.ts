/**
 * Every policy by name. Adding a policy: one file in this folder, one line here, and
 * its name in `POLICY_NAMES` (core/protocol/state.ts).
 */
import { POLICY_NAMES, type PolicyName } from '../../protocol/state.js';
import type { Policy } from '../policy.js';
import { fairPolicy } from './fair.js';
import { fifoPolicy } from './fifo.js';
import { packPolicy } from './pack.js';
import { priorityPolicy } from './priority.js';
import { srtfPolicy } from './srtf.js';

/** The policies, keyed by the names users type. */
export const POLICIES: Readonly<Record<PolicyName, Policy>> = {
  FIFO: fifoPolicy,
  SRTF: srtfPolicy,
  PACK: packPolicy,
  FAIR: fairPolicy,
  PRIORITY: priorityPolicy,
};

/** The policy a user means by `name`, case-insensitively; throws listing the valid names. */
export function getPolicy(name: string): Policy {
  const key = String(name).toUpperCase();
  if (!(POLICY_NAMES as readonly string[]).includes(key)) {
    throw new Error(`Unknown policy "${name}"; valid policies: ${POLICY_NAMES.join(', ')}`);
  }
  return POLICIES[key as PolicyName];
}
