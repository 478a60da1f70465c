import { describe, expect, it } from 'vitest';
import {
  DATA_INTERFACES, adapterInfo, compilationInfo, deviceLostInfo, supportedFeatures, supportedLimits, wgslLanguageFeatures,
} from '../../../../core/client/remote/interfaces.js';
import { enumValue, wrappedUint32 } from '../../../../core/client/remote/webidl.js';

describe('WebGPU plain-data interfaces', () => {
  it('cannot be constructed by scripts', () => {
    for (const [name, cls] of Object.entries(DATA_INTERFACES)) {
      expect(() => new (cls as unknown as new () => object)(), name).toThrow(TypeError);
    }
  });

  it('limits are readonly getters on the prototype, listed by for…in', () => {
    const limits = supportedLimits({ maxBindGroups: 4, maxBufferSize: 256 });
    expect(limits).toBeInstanceOf(DATA_INTERFACES.GPUSupportedLimits);
    expect(Object.keys(limits)).toEqual([]);
    const keys: string[] = [];
    for (const key in limits) keys.push(key);
    expect(keys).toEqual(['maxBindGroups', 'maxBufferSize']);
    expect(() => { (limits as unknown as Record<string, number>).maxBindGroups = 1; }).toThrow(TypeError);
    expect(limits.maxBindGroups).toBe(4);
    // Read on anything but an instance, an attribute throws (WebIDL's "Illegal invocation").
    expect(() => (DATA_INTERFACES.GPUSupportedLimits.prototype as GPUSupportedLimits).maxBindGroups).toThrow(TypeError);
  });

  it('features are a readonly setlike', () => {
    const features = supportedFeatures(['timestamp-query', 'shader-f16']);
    expect(features).toBeInstanceOf(DATA_INTERFACES.GPUSupportedFeatures);
    expect(features.size).toBe(2);
    expect(features.has('shader-f16')).toBe(true);
    expect([...features]).toEqual(['timestamp-query', 'shader-f16']);
    expect([...features.entries()][0]).toEqual(['timestamp-query', 'timestamp-query']);
    const seen: string[] = [];
    features.forEach((value) => seen.push(value));
    expect(seen).toEqual([...features]);
    expect((features as unknown as { add?: unknown }).add).toBeUndefined();
    expect(wgslLanguageFeatures(['packed_4x8_integer_dot_product'])).toBeInstanceOf(DATA_INTERFACES.WGSLLanguageFeatures);
  });

  it('adapter info, compilation info and lost info hold their fields as attributes', () => {
    const info = adapterInfo({ vendor: 'v', architecture: 'a', device: 'd', description: 'x', subgroupMinSize: 4, subgroupMaxSize: 64, isFallbackAdapter: true });
    expect(info).toBeInstanceOf(DATA_INTERFACES.GPUAdapterInfo);
    expect([info.vendor, info.subgroupMaxSize, info.isFallbackAdapter]).toEqual(['v', 64, true]);
    const compiled = compilationInfo([{ message: 'm', type: 'error', lineNum: 3, linePos: 1, offset: 9, length: 2 }]);
    expect(compiled).toBeInstanceOf(DATA_INTERFACES.GPUCompilationInfo);
    expect(compiled.messages).toBe(compiled.messages);
    expect(Object.isFrozen(compiled.messages)).toBe(true);
    expect(compiled.messages[0]).toBeInstanceOf(DATA_INTERFACES.GPUCompilationMessage);
    expect(compiled.messages[0].lineNum).toBe(3);
    const lost = deviceLostInfo('destroyed', 'gone');
    expect(lost).toBeInstanceOf(DATA_INTERFACES.GPUDeviceLostInfo);
    expect([lost.reason, lost.message]).toEqual(['destroyed', 'gone']);
  });
});

describe('WebIDL conversions', () => {
  it('wraps a plain unsigned long and checks an enum', () => {
    expect(wrappedUint32(-1)).toBe(2 ** 32 - 1);
    expect(wrappedUint32(NaN)).toBe(0);
    expect(enumValue('storage', ['uniform', 'storage'], 'type')).toBe('storage');
    expect(() => enumValue('bogus', ['uniform', 'storage'], 'type')).toThrow(TypeError);
  });
});
