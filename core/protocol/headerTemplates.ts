/**
 * The two frame headers of every awaited call, written and read without JSON's
 * generic walk: a job's batch (`{"t":"batch","commandBytes":N}`) and the
 * service's reply with an empty result (`{"t":"reply","rid":N,"result":{}}`,
 * or `null`). On an idle round trip, stringifying and parsing these small
 * objects was a tenth of each side's work, most of it before V8 had compiled
 * anything.
 *
 * Both directions are exact: `templateJson` returns what `JSON.stringify`
 * would for a header it accepts (same keys, same order), and `parseTemplate`
 * returns what `JSON.parse` would for bytes it accepts; anything else returns
 * null and takes the generic path, so a malformed header gets JSON's error as
 * before. Portable: no Node APIs.
 */

const BATCH_PREFIX = '{"t":"batch","commandBytes":';
const REPLY_PREFIX = '{"t":"reply","rid":';
const EMPTY_RESULT = ',"result":{}}';
const NULL_RESULT = ',"result":null}';

/** The templates' constant parts as bytes, for matching a header without decoding it. */
const ascii = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0));
const BATCH_PREFIX_BYTES = ascii(BATCH_PREFIX);
const REPLY_PREFIX_BYTES = ascii(REPLY_PREFIX);
const EMPTY_RESULT_BYTES = ascii(EMPTY_RESULT);
const NULL_RESULT_BYTES = ascii(NULL_RESULT);
const CLOSE_BRACE = 0x7d;

/** Counts up to 2^53 are written in at most 16 digits; longer ones take the generic path. */
const MAX_DIGITS = 15;

/** A template's number: a non-negative safe integer. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** Whether `value` is `{}`: a plain object with no own enumerable keys (as JSON.stringify sees it). */
function isEmptyRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return false;
  return true;
}

/** Own enumerable keys of `header`, counted up to `limit + 1`. */
function keyCount(header: object, limit: number): number {
  let count = 0;
  for (const key in header) {
    if (Object.hasOwn(header, key) && ++count > limit) break;
  }
  return count;
}

/** `JSON.stringify(header)` when `header` is one of the templates' shapes, else null. */
export function templateJson(header: unknown): string | null {
  if (typeof header !== 'object' || header === null) return null;
  const fields = header as { t?: unknown; commandBytes?: unknown; rid?: unknown; result?: unknown };
  if (fields.t === 'batch') {
    return isCount(fields.commandBytes) && keyCount(header, 2) === 2 ? BATCH_PREFIX + fields.commandBytes + '}' : null;
  }
  if (fields.t !== 'reply' || !isCount(fields.rid) || keyCount(header, 3) !== 3) return null;
  if (fields.result === null) return REPLY_PREFIX + fields.rid + NULL_RESULT;
  return isEmptyRecord(fields.result) ? REPLY_PREFIX + fields.rid + EMPTY_RESULT : null;
}

/** Whether `bytes` holds `expected` at `at`. */
function matches(bytes: Uint8Array, at: number, expected: Uint8Array): boolean {
  if (at + expected.length > bytes.length) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/**
 * The count at `at` of `bytes` as JSON writes one (no sign, no leading zero, no fraction), and where it
 * ends; null when there is none or it is longer than MAX_DIGITS.
 */
function readCount(bytes: Uint8Array, at: number): { value: number; end: number } | null {
  let value = 0;
  let end = at;
  while (end < bytes.length && bytes[end] >= 0x30 && bytes[end] <= 0x39) {
    value = value * 10 + (bytes[end] - 0x30);
    end++;
  }
  const digits = end - at;
  if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && bytes[at] === 0x30)) return null;
  return { value, end };
}

/** `JSON.parse` of a header's UTF-8 bytes when they are exactly one of the templates, else null. */
export function parseTemplate(bytes: Uint8Array): object | null {
  if (matches(bytes, 0, BATCH_PREFIX_BYTES)) {
    const count = readCount(bytes, BATCH_PREFIX_BYTES.length);
    if (!count || count.end !== bytes.length - 1 || bytes[count.end] !== CLOSE_BRACE) return null;
    return { t: 'batch', commandBytes: count.value };
  }
  if (!matches(bytes, 0, REPLY_PREFIX_BYTES)) return null;
  const rid = readCount(bytes, REPLY_PREFIX_BYTES.length);
  if (!rid) return null;
  const rest = bytes.length - rid.end;
  if (rest === EMPTY_RESULT_BYTES.length && matches(bytes, rid.end, EMPTY_RESULT_BYTES)) return { t: 'reply', rid: rid.value, result: {} };
  if (rest === NULL_RESULT_BYTES.length && matches(bytes, rid.end, NULL_RESULT_BYTES)) return { t: 'reply', rid: rid.value, result: null };
  return null;
}
