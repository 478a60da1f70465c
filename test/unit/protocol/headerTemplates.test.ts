/**
 * The hot headers' templates must agree with JSON exactly: what templateJson
 * writes is JSON.stringify's text, what parseTemplate reads is JSON.parse's
 * value, and everything else (other keys, other values, bytes JSON rejects)
 * is left to JSON.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate, templateJson } from '../../../core/protocol/headerTemplates.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

describe('header templates', () => {
  it('write what JSON.stringify writes for a batch and an empty reply, and read it back as JSON.parse does', () => {
    const headers = [
      { t: 'batch', commandBytes: 0 }, { t: 'batch', commandBytes: 8 }, { t: 'batch', commandBytes: 0xffffffff },
      { t: 'reply', rid: 1, result: {} }, { t: 'reply', rid: 123456789, result: null }, { t: 'reply', rid: 0, result: {} },
    ];
    for (const header of headers) {
      const json = JSON.stringify(header);
      expect(templateJson(header)).toBe(json);
      expect(parseTemplate(utf8(json))).toEqual(JSON.parse(json));
    }
  });

  it('leave every other header to JSON', () => {
    const others: unknown[] = [
      null, 7, 'batch', [], { t: 'batch' }, { t: 'batch', commandBytes: -1 }, { t: 'batch', commandBytes: 1.5 },
      { t: 'batch', commandBytes: '8' }, { t: 'batch', commandBytes: 8, scratchBytes: 4 }, { commandBytes: 8, t: 'hello' },
      { t: 'reply', rid: 1, result: { a: 1 } }, { t: 'reply', rid: 1, result: [] }, { t: 'reply', rid: 1 },
      { t: 'reply', rid: 1, result: {}, extra: true }, { t: 'reply', rid: 1, error: { code: 1, message: 'x' } },
      { t: 'reply', rid: -1, result: {} }, { t: 'reply', rid: 1, result: new Map() }, { t: 'reply', rid: 1, result: undefined },
    ];
    for (const header of others) expect(templateJson(header)).toBeNull();
  });

  it('read only exact template bytes; JSON decides about the rest, errors included', () => {
    const texts = [
      '{"t":"batch","commandBytes":08}', '{"t":"batch","commandBytes":-8}', '{"t":"batch","commandBytes":8 }',
      '{"t":"batch","commandBytes":8}x', '{"t":"batch","commandBytes":}', '{"t":"batch","commandBytes":8',
      '{"t":"batch","commandBytes":1234567890123456}', '{"t":"batch","commandBytes":8.5}', '{"t":"batch", "commandBytes":8}',
      '{"t":"reply","rid":7,"result":{} }', '{"t":"reply","rid":7,"result":{"a":1}}', '{"t":"reply","rid":07,"result":{}}',
      '{"t":"reply","rid":7,"result":nul}', '{"t":"reply","rid":7}', '', '{',
    ];
    for (const text of texts) expect(parseTemplate(utf8(text))).toBeNull();
  });
});
