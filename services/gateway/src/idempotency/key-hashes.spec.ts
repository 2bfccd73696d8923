import { commandIdFor, hashBody } from './key-hashes';

/** Bodies as the gateway sees them: parsed from the wire. */
const parsed = (text: string) => JSON.parse(text) as unknown;

describe('hashBody', () => {
  it('is a sha256 hex digest', () => {
    expect(hashBody({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is equal for bodies that differ only in key order or whitespace', () => {
    expect(hashBody(parsed('{ "subject": "Hi", "visitor": { "name": "A", "email": "a@x.io" } }'))).toBe(
      hashBody(parsed('{"visitor":{"email":"a@x.io","name":"A"},"subject":"Hi"}')),
    );
  });

  it.each([
    ['{"a":1}', '{"a":2}'],
    ['{"a":1}', '{"a":"1"}'],
    ['{"a":1}', '{"a":1,"b":1}'],
    ['{"a":null}', '{}'],
    ['{"a":[1,2]}', '{"a":[2,1]}'],
    ['{"a":{"b":1}}', '{"a":{"b":1,"c":null}}'],
    ['{"a":true}', '{"a":"true"}'],
    ['{"ab":1}', '{"a":1,"b":1}'],
    ['{"a":"x"}', '{"A":"x"}'],
    ['[{"a":1},{"b":2}]', '[{"a":1,"b":2}]'],
  ])('differs for %s and %s', (a, b) => {
    expect(hashBody(parsed(a))).not.toBe(hashBody(parsed(b)));
  });

  it('hashes a missing body like an empty object', () => {
    expect(hashBody(undefined)).toBe(hashBody({}));
  });
});

describe('commandIdFor', () => {
  const account = '4f6c1b9e-2a1d-4d8e-9c55-6b1a3f0e7d21';
  const other = '9a0e2c11-7b3d-4e5f-8a6b-1c2d3e4f5a6b';

  it('is stable for the same account and key', () => {
    expect(commandIdFor(account, 'key-1')).toBe(commandIdFor(account, 'key-1'));
  });

  it('is 32 lowercase hex characters', () => {
    expect(commandIdFor(account, 'key-1')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('is scoped to the account', () => {
    expect(commandIdFor(account, 'key-1')).not.toBe(commandIdFor(other, 'key-1'));
  });

  it('differs per key, including keys differing only in case or by a trailing space', () => {
    const ids = new Set(['key-1', 'key-2', 'KEY-1', 'key-1 ', ''].map((key) => commandIdFor(account, key)));
    expect(ids.size).toBe(5);
  });

  it('cannot be forged by moving characters between account and key', () => {
    expect(commandIdFor('ab', 'c')).not.toBe(commandIdFor('a', 'bc'));
  });
});
