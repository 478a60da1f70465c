/**
 * WebIDL's conversion of the integer arguments of WebGPU calls, which are all
 * `[EnforceRange]` (GPUSize64, GPUSize32, GPUIndex32, GPUBufferUsageFlags, …):
 * a fraction is truncated, while NaN, ±Infinity and anything outside the
 * type's range throw a TypeError at the call, as on a local device. Without
 * this the command would reach the service malformed and come back as an
 * uncaptured error instead of an exception (TF.js's sparseSegmentMean specs
 * create buffers of negative size, for one).
 */

/** The largest GPUSize64 a JavaScript number holds exactly (WebIDL's `unsigned long long` bound). */
export const MAX_SIZE64 = Number.MAX_SAFE_INTEGER;
/** The largest `unsigned long` (GPUSize32, GPUIndex32, GPUFlagsConstant). */
export const MAX_UINT32 = 0xffff_ffff;

/** `value` converted as an `[EnforceRange]` unsigned integer of at most `max`; `what` names it in the TypeError. */
export function enforceRange(value: unknown, max: number, what: string): number {
  const number = Number(value); // WebIDL's ToNumber: a BigInt or a Symbol throws a TypeError here too
  if (!Number.isFinite(number)) throw new TypeError(`${what}: ${String(value)} is not a finite number`);
  const integer = Math.trunc(number);
  if (integer < 0 || integer > max) throw new TypeError(`${what}: ${integer} is outside [0, ${max}]`);
  return integer + 0; // -0 -> 0
}

/** A GPUSize64 argument. */
export function size64(value: unknown, what: string): number {
  return enforceRange(value, MAX_SIZE64, what);
}

/** A GPUSize32, GPUIndex32 or flags argument. */
export function uint32(value: unknown, what: string): number {
  return enforceRange(value, MAX_UINT32, what);
}

/** An optional GPUSize64 argument: undefined stays undefined (the call's default applies). */
export function optionalSize64(value: unknown, what: string): number | undefined {
  return value === undefined ? undefined : size64(value, what);
}

/** An optional GPUSize32 argument or member: undefined stays undefined. */
export function optionalUint32(value: unknown, what: string): number | undefined {
  return value === undefined ? undefined : uint32(value, what);
}

/** A plain (not [EnforceRange]) `unsigned long`: WebIDL wraps it modulo 2^32, NaN and ±Infinity give 0. */
export function wrappedUint32(value: unknown): number {
  return Number(value) >>> 0;
}

/** An enum value: its string when it is one of `values`, else the TypeError WebIDL throws. */
export function enumValue<T extends string>(value: unknown, values: readonly T[], what: string): T {
  const text = String(value);
  if (!(values as readonly string[]).includes(text)) throw new TypeError(`${what}: '${text}' is not a valid value (${values.join(', ')})`);
  return text as T;
}

/** A dictionary argument as WebIDL converts it: null and undefined are both the empty dictionary. */
export function dictionary<T extends object>(value: T | null | undefined): T {
  return value ?? ({} as T);
}

/**
 * The bytes `data` names (writeBuffer's and setImmediates' rule: `dataOffset` and `size` count elements of a
 * typed array, bytes of anything else), as a view; an OperationError naming `what` when they are outside it.
 */
export function bytesOf(what: string, data: ArrayBufferView | ArrayBuffer | SharedArrayBuffer, dataOffset = 0, size?: number): Uint8Array {
  if (ArrayBuffer.isView(data)) {
    const element = (data as unknown as { BYTES_PER_ELEMENT?: number }).BYTES_PER_ELEMENT ?? 1;
    const start = data.byteOffset + dataOffset * element;
    const length = size === undefined ? data.byteLength - dataOffset * element : size * element;
    if (dataOffset * element > data.byteLength || length < 0 || start + length > data.byteOffset + data.byteLength) {
      throw new DOMException(`${what}: dataOffset and size are outside the data`, 'OperationError');
    }
    return new Uint8Array(data.buffer, start, length);
  }
  const buffer = data as ArrayBuffer;
  const length = size ?? buffer.byteLength - dataOffset;
  if (dataOffset > buffer.byteLength || dataOffset + length > buffer.byteLength) {
    throw new DOMException(`${what}: dataOffset and size are outside the data`, 'OperationError');
  }
  return new Uint8Array(buffer, dataOffset, length);
}
