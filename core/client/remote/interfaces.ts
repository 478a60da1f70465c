/**
 * WebGPU's plain-data interfaces, as a job sees them on a local device:
 * GPUSupportedLimits, GPUSupportedFeatures, WGSLLanguageFeatures,
 * GPUAdapterInfo, GPUCompilationInfo, GPUCompilationMessage and
 * GPUDeviceLostInfo. Each is a class scripts cannot construct, whose
 * attributes are readonly getters on its prototype (so `instanceof` holds,
 * assigning one throws in strict code, and `for…in` lists them), and whose
 * setlikes answer `has`, `size` and iteration but cannot be changed.
 */

/** Only this module makes instances: WebIDL's interfaces throw on `new` from scripts. */
const INTERNAL = Symbol('internal');

/** An interface class as install.ts puts it on `globalThis` (it names it there). */
export type InterfaceClass = new (...args: never[]) => object;

/**
 * A WebIDL interface of readonly attributes: `make(values)` gives an instance
 * whose attributes are enumerable getters on the prototype, one per key of
 * `values` (defined at the first instance that has it); read on anything else
 * they throw a TypeError, as WebIDL's "Illegal invocation".
 */
function attributeInterface<F extends object>(): { cls: InterfaceClass; make(values: F): object } {
  const fields = new WeakMap<object, F>();
  const prototypeKeys = new Set<string>();
  class Attributes {
    constructor(token: unknown, values: F) {
      if (token !== INTERNAL) throw new TypeError('Illegal constructor');
      fields.set(this, { ...values });
    }
  }
  const read = (self: object, key: string): unknown => {
    const values = fields.get(self);
    if (!values) throw new TypeError('Illegal invocation');
    return values[key as keyof F];
  };
  return {
    cls: Attributes,
    make(values) {
      for (const key of Object.keys(values)) {
        if (prototypeKeys.has(key)) continue;
        prototypeKeys.add(key);
        Object.defineProperty(Attributes.prototype, key, { get() { return read(this, key); }, enumerable: true, configurable: true });
      }
      return new Attributes(INTERNAL, values);
    },
  };
}

/**
 * A WebIDL readonly setlike<DOMString>: has, size, keys, values, entries,
 * forEach and iteration, straight on its prototype; nothing changes it.
 */
function setlikeInterface(): { cls: InterfaceClass; make(items: Iterable<string>): ReadonlySet<string> } {
  const sets = new WeakMap<object, ReadonlySet<string>>();
  const itemsOf = (self: object): ReadonlySet<string> => {
    const items = sets.get(self);
    if (!items) throw new TypeError('Illegal invocation');
    return items;
  };
  class Setlike {
    constructor(token: unknown, items: Iterable<string>) {
      if (token !== INTERNAL) throw new TypeError('Illegal constructor');
      sets.set(this, new Set(items));
    }
  }
  const members = {
    get size(): number { return itemsOf(this).size; },
    has(value: unknown): boolean { return itemsOf(this).has(String(value)); },
    keys() { return itemsOf(this).keys(); },
    values() { return itemsOf(this).values(); },
    entries() { return itemsOf(this).entries(); },
    forEach(callback: (value: string, key: string, set: object) => void, thisArg?: unknown): void {
      for (const value of itemsOf(this)) callback.call(thisArg, value, value, this);
    },
  };
  for (const key of Object.getOwnPropertyNames(members)) {
    Object.defineProperty(Setlike.prototype, key, { ...Object.getOwnPropertyDescriptor(members, key), enumerable: true });
  }
  Object.defineProperty(Setlike.prototype, Symbol.iterator, { value: members.values, configurable: true, writable: true });
  return { cls: Setlike, make: (items) => new Setlike(INTERNAL, items) as unknown as ReadonlySet<string> };
}

/** What `adapter.info` and `device.adapterInfo` describe. */
export interface AdapterInfoFields {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  subgroupMinSize: number;
  subgroupMaxSize: number;
  isFallbackAdapter: boolean;
}

/** One message of a shader module's compilation. */
export interface CompilationMessageFields {
  message: string;
  type: GPUCompilationMessageType;
  lineNum: number;
  linePos: number;
  offset: number;
  length: number;
}

const limits = attributeInterface<Record<string, number>>();
const features = setlikeInterface();
const languageFeatures = setlikeInterface();
const info = attributeInterface<AdapterInfoFields>();
const message = attributeInterface<CompilationMessageFields>();
const compilation = attributeInterface<{ messages: readonly object[] }>();
const lost = attributeInterface<{ reason: GPUDeviceLostReason; message: string }>();

/** The interfaces' classes, by their WebGPU names, for install.ts to put on `globalThis`. */
export const DATA_INTERFACES: Readonly<Record<string, InterfaceClass>> = {
  GPUSupportedLimits: limits.cls,
  GPUSupportedFeatures: features.cls,
  WGSLLanguageFeatures: languageFeatures.cls,
  GPUAdapterInfo: info.cls,
  GPUCompilationMessage: message.cls,
  GPUCompilationInfo: compilation.cls,
  GPUDeviceLostInfo: lost.cls,
};

/** Limits a job sees, with `values` (a copy is kept). */
export function supportedLimits(values: Record<string, number>): GPUSupportedLimits {
  return limits.make(values) as GPUSupportedLimits;
}

/** Features a job sees. */
export function supportedFeatures(items: Iterable<string>): GPUSupportedFeatures {
  return features.make(items) as GPUSupportedFeatures;
}

/** WGSL language features a job sees. */
export function wgslLanguageFeatures(items: Iterable<string>): WGSLLanguageFeatures {
  return languageFeatures.make(items) as WGSLLanguageFeatures;
}

/** Adapter info a job sees. */
export function adapterInfo(fields: AdapterInfoFields): GPUAdapterInfo {
  return info.make(fields) as unknown as GPUAdapterInfo;
}

/** Compilation info a job sees: `messages` is one frozen array of GPUCompilationMessage. */
export function compilationInfo(messages: readonly CompilationMessageFields[]): GPUCompilationInfo {
  return compilation.make({ messages: Object.freeze(messages.map((m) => message.make(m))) }) as GPUCompilationInfo;
}

/** Lost info a job sees. */
export function deviceLostInfo(reason: GPUDeviceLostReason, text: string): GPUDeviceLostInfo {
  return lost.make({ reason, message: text }) as GPUDeviceLostInfo;
}
