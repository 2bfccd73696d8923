import { canonicalJson } from './canonical-json';

/** Bodies as the gateway sees them: parsed from the wire. */
const parsed = (text: string) => JSON.parse(text) as unknown;

describe('canonicalJson', () => {
  it('sorts object keys', () => {
    expect(canonicalJson(parsed('{"b":1,"a":2,"c":3}'))).toBe('{"a":2,"b":1,"c":3}');
  });

  it('sorts keys at every level, including objects inside arrays', () => {
    expect(canonicalJson(parsed('{"z":{"y":1,"x":[{"q":1,"p":2}]},"a":null}'))).toBe(
      '{"a":null,"z":{"x":[{"p":2,"q":1}],"y":1}}',
    );
  });

  it('keeps array order', () => {
    expect(canonicalJson([3, 1, 2])).toBe('[3,1,2]');
    expect(canonicalJson([1, 2])).not.toBe(canonicalJson([2, 1]));
  });

  it.each([
    [null, 'null'],
    [true, 'true'],
    [false, 'false'],
    [0, '0'],
    [-1.5, '-1.5'],
    ['', '""'],
    ['a"b\\c\n', '"a\\"b\\\\c\\n"'],
    [[], '[]'],
    [{}, '{}'],
  ])('renders %j as %s', (value, text) => {
    expect(canonicalJson(value)).toBe(text);
  });

  it('produces JSON that parses back to the same value', () => {
    const value = parsed(
      '{"visitor":{"name":"Zoë \\"Z\\"","email":null},"metadata":{"ä":1,"a":[1,{"b":"wiadomość"}],"😀":"x"},"n":1e3}',
    );
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });

  it('quotes keys that need escaping', () => {
    expect(canonicalJson(parsed('{"a\\"b":1}'))).toBe('{"a\\"b":1}');
    expect(JSON.parse(canonicalJson(parsed('{"a\\"b":1,"\\n":2}')))).toEqual({ 'a"b': 1, '\n': 2 });
  });

  it('treats number spellings that parse equal as equal', () => {
    expect(canonicalJson(parsed('{"n":1.0}'))).toBe(canonicalJson(parsed('{"n":1}')));
    expect(canonicalJson(parsed('{"n":1e2}'))).toBe(canonicalJson(parsed('{"n":100}')));
  });

  it('keeps an own "__proto__" key from a parsed body', () => {
    const value = parsed('{"__proto__":{"x":1},"a":1}');
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"a":1}');
    expect(canonicalJson(value)).not.toBe(canonicalJson(parsed('{"a":1}')));
  });
});
