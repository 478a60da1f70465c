/**
 * TF.js specs whose outcome on a local device is not stable from run to run,
 * each with the reason. A difference in one of these between the local run
 * and the remote one is reported but does not fail the check.
 */

/** A spec (matched on its full name) and why it is flaky locally. */
export interface FlakySpec {
  name: RegExp;
  reason: string;
}

/** Known to be flaky on a local device (SwiftShader, dawn.node). */
export const LOCALLY_FLAKY: readonly FlakySpec[] = [
  {
    name: /^tensor\.data webgpu .* \.data\(\) postpones disposal of tensor$/,
    reason: 'its tidy disposes the tensor while a read is pending; the read then rejects (reading \'backend\' of undefined) '
      + 'in this spec or the next, whichever runs when the read returns: on a local device this one, through the service usually the next. '
      + 'tfjs-backend-webgpu\'s own setup_test.ts excludes it',
  },
  {
    name: /^time cpu webgpu .* simple upload$/,
    reason: 'expects tf.time() to measure a kernel time above 0 ms, which a fast square of 10x10 zeros may not reach',
  },
];

/** The reason `fullName` is known to be flaky locally, or null. */
export function isLocallyFlaky(fullName: string): string | null {
  return LOCALLY_FLAKY.find((spec) => spec.name.test(fullName))?.reason ?? null;
}
