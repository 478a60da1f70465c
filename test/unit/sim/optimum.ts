/** Optimal schedules worked out in closed form, for tests that hold the simulator's policies to them. */

/** Average JCT of jobs of these lengths, all arriving at 0, run one after another shortest first: the optimum (Smith's rule). */
export function shortestFirstAvgJctMs(lengthsMs: readonly number[]): number {
  let endMs = 0;
  return [...lengthsMs].sort((a, b) => a - b).reduce((sum, lengthMs) => sum + (endMs += lengthMs), 0) / lengthsMs.length;
}
