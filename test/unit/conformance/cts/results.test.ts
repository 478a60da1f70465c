/** Reading the CTS runner's output and grouping what regressed through the service by cause. */
import { describe, expect, it } from 'vitest';
import { causeOf, groupByCause, parseQueryOutput, passCount, regressions, setApartLocallyFlaky } from '../../../../conformance/cts/results.js';

/** Output as the runner prints it with --print-json: a driver's warning first, a summary after. */
function output(results: [string, string, string[]?][]): string {
  const document = { version: 'unknown', results: results.map(([name, status, logs]) => [name, { status, timems: 1.5, logs: logs ?? [] }]) };
  // Dawn prints some warnings without a newline, right before the document.
  return `Warning: a driver said something unusual.${JSON.stringify(document, null, 2)}\n\n** Summary **\nPassed = 1 / 2\n`;
}

describe('CTS results', () => {
  it('reads the cases between the JSON document\'s braces, with each failure\'s first log line', () => {
    const run = parseQueryOutput(output([['webgpu:a:x=1', 'pass'], ['webgpu:a:x=2', 'fail', ['EXCEPTION: TypeError: nope\n  at stack']]]));
    expect(run.error).toBeNull();
    expect(run.cases.get('webgpu:a:x=1')).toEqual({ status: 'pass', timeMs: 1.5 });
    expect(run.cases.get('webgpu:a:x=2')).toEqual({ status: 'fail', timeMs: 1.5, message: 'EXCEPTION: TypeError: nope' });
    expect(passCount(run)).toEqual({ passed: 1, total: 2 });
    expect(parseQueryOutput('Segmentation fault\n').error).toMatch(/no results/);
  });

  it('counts a case that passes locally and fails, or is missing, through the service', () => {
    const local = parseQueryOutput(output([['c1', 'pass'], ['c2', 'pass'], ['c3', 'fail'], ['c4', 'warn']]));
    const remote = parseQueryOutput(output([['c1', 'pass'], ['c2', 'fail', ['EXCEPTION: Error: x']], ['c3', 'pass']]));
    expect(regressions(local, remote)).toEqual([
      { name: 'c2', remote: 'fail', message: 'EXCEPTION: Error: x' },
      { name: 'c4', remote: 'missing', message: 'not run through the service' },
    ]);
    const died = parseQueryOutput('');
    expect(regressions(local, died).map((r) => r.message)).toEqual([died.error, died.error, died.error]);
  });

  it('groups regressions whose messages differ only in numbers and names, largest group first', () => {
    expect(causeOf('(in subcase: label="a") EXCEPTION: TypeError: createTexture is not supported')).toBe('TypeError: createTexture is not supported');
    expect(causeOf("EXPECTATION FAILED: limit 16400 over 16384 for 'maxComputeWorkgroupStorageSize'")).toBe('limit N over N for …');
    const groups = groupByCause([
      { name: 'a', remote: 'fail', message: 'EXCEPTION: size 12 > 8' },
      { name: 'b', remote: 'fail', message: 'EXCEPTION: size 16 > 8' },
      { name: 'c', remote: 'fail', message: 'EXCEPTION: other' },
      { name: 'd', remote: 'fail', message: 'EXCEPTION: size 20 > 4' },
      { name: 'e', remote: 'fail', message: 'EXCEPTION: size 24 > 4' },
    ]);
    expect(groups).toEqual([
      { cause: 'size N > N', count: 4, examples: ['a', 'b', 'd'] },
      { cause: 'other', count: 1, examples: ['c'] },
    ]);
  });

  it('sets known locally flaky cases apart with their reason, and only those', () => {
    const swizzle = 'webgpu:api,operation,texture_view,texture_component_swizzle:read_swizzle:format="bc1-rgba-unorm";func="textureSample"';
    const astc = 'webgpu:api,operation,texture_view,texture_component_swizzle:read_swizzle:format="astc-10x8-unorm-srgb";func="textureSampleLevel"';
    const uncompressed = 'webgpu:api,operation,texture_view,texture_component_swizzle:read_swizzle:format="rgba8unorm";func="textureSample"';
    const { real, flaky } = setApartLocallyFlaky([
      { name: swizzle, remote: 'fail', message: 'EXPECTATION FAILED: Texture level had unexpected contents:' },
      { name: uncompressed, remote: 'fail', message: 'EXPECTATION FAILED: Texture level had unexpected contents:' },
      { name: astc, remote: 'fail', message: 'EXPECTATION FAILED: Texture level had unexpected contents:' },
    ]);
    expect(real.map((r) => r.name)).toEqual([uncompressed]);
    expect(flaky.map((r) => r.name)).toEqual([swizzle, astc]);
    expect(flaky[0]!.reason).toMatch(/SwiftShader does not decode the blocks for a compute-stage read/);
  });
});
