import { DUPLICATE_KEY_MESSAGE, jsonKeyError, RESERVED_KEY_MESSAGE } from './json-keys';

describe('jsonKeyError', () => {
  it.each([
    ['{"status":"closed","status":"active"}', 'status', DUPLICATE_KEY_MESSAGE],
    ['{"a":"x","\\u0061":"y"}', 'a', DUPLICATE_KEY_MESSAGE],
    ['{"m":{"a":[1,{"b":1,"c":"}\\",","b":2}]}}', 'm.a.1.b', DUPLICATE_KEY_MESSAGE],
    ['[{"k":1},{"k":1,"k":1}]', '1.k', DUPLICATE_KEY_MESSAGE],
    ['{"m":{"__proto__":{}}}', 'm.__proto__', RESERVED_KEY_MESSAGE],
    ['{"m":{"constructor":{"prototype":1}}}', 'm.constructor.prototype', RESERVED_KEY_MESSAGE],
    [`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`, `${'k'.repeat(64)}…`, DUPLICATE_KEY_MESSAGE],
  ])('%s: %s %s', (text, field, message) => {
    expect(jsonKeyError(text)).toEqual({ field, message });
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":1}]}',
    '{"constructor":"x","prototype":"y","o":{"constructor":{"p":1}},"q":{"prototype":1}}',
    '{"s":"\\"a\\":1,\\"a\\":2","t":"\\\\","a":1}',
    '{"text":"__proto__","list":["a","a"]}',
    '"a"',
    '[]',
  ])('accepts %s', (text) => {
    expect(jsonKeyError(text)).toBeUndefined();
  });
});
