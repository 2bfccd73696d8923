import { createHash } from 'node:crypto';
import { generateApiKey, hashSecret, parseApiKey, secretMatches } from './api-key-format';

const FORMAT = /^cms_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/;

describe('generateApiKey', () => {
  it('produces cms_<16 hex key id>_<43 base64url secret>', () => {
    const { keyId, apiKey } = generateApiKey();
    expect(apiKey).toMatch(FORMAT);
    expect(keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(apiKey.startsWith(`cms_${keyId}_`)).toBe(true);
  });

  it('carries 256 bits of secret', () => {
    const { apiKey } = generateApiKey();
    const secret = apiKey.split('_').slice(2).join('_');
    expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
  });

  it('stores only the SHA-256 of the secret, never the secret or the key', () => {
    const { apiKey, secretHash } = generateApiKey();
    const secret = parseApiKey(apiKey)!.secret;
    expect(secretHash.equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(secretHash).toHaveLength(32);
    expect(secretHash.toString('utf8')).not.toContain(secret);
  });

  it('never repeats a key id or a secret', () => {
    const keys = Array.from({ length: 500 }, () => generateApiKey());
    expect(new Set(keys.map((k) => k.keyId)).size).toBe(500);
    expect(new Set(keys.map((k) => parseApiKey(k.apiKey)!.secret)).size).toBe(500);
  });
});

describe('parseApiKey', () => {
  it('round-trips a generated key', () => {
    for (let i = 0; i < 50; i++) {
      const { keyId, apiKey, secretHash } = generateApiKey();
      const parsed = parseApiKey(apiKey);
      expect(parsed?.keyId).toBe(keyId);
      expect(secretMatches(parsed!.secret, secretHash)).toBe(true);
    }
  });

  it('splits a secret that itself contains underscores and dashes', () => {
    const secret = `a_b-${'c'.repeat(39)}`;
    expect(parseApiKey(`cms_0123456789abcdef_${secret}`)).toEqual({ keyId: '0123456789abcdef', secret });
  });

  const valid = `cms_0123456789abcdef_${'A'.repeat(43)}`;
  it.each([
    ['empty', ''],
    ['no prefix', valid.slice(4)],
    ['other prefix', `sk_${valid.slice(4)}`],
    ['upper-case prefix', `CMS_${valid.slice(4)}`],
    ['upper-case key id', `cms_0123456789ABCDEF_${'A'.repeat(43)}`],
    ['short key id', `cms_0123456789abcde_${'A'.repeat(43)}`],
    ['non-hex key id', `cms_0123456789abcdeg_${'A'.repeat(43)}`],
    ['short secret', `cms_0123456789abcdef_${'A'.repeat(42)}`],
    ['long secret', `cms_0123456789abcdef_${'A'.repeat(44)}`],
    ['standard base64 characters', `cms_0123456789abcdef_${'A'.repeat(42)}+`],
    ['padding', `cms_0123456789abcdef_${'A'.repeat(42)}=`],
    ['trailing newline', `${valid}\n`],
    ['leading space', ` ${valid}`],
    ['trailing space', `${valid} `],
    ['Bearer prefix left in', `Bearer ${valid}`],
    ['two keys', `${valid},${valid}`],
  ])('rejects %s', (_name, text) => {
    expect(parseApiKey(text)).toBeUndefined();
  });

  it('accepts the well-formed sample', () => {
    expect(parseApiKey(valid)).toEqual({ keyId: '0123456789abcdef', secret: 'A'.repeat(43) });
  });
});

describe('secretMatches', () => {
  const secret = 'x'.repeat(43);
  const stored = hashSecret(secret);

  it('accepts the right secret', () => {
    expect(secretMatches(secret, stored)).toBe(true);
  });

  it.each([
    ['another secret', 'y'.repeat(43)],
    ['one character off', `${'x'.repeat(42)}y`],
    ['a prefix', 'x'.repeat(42)],
    ['empty', ''],
  ])('rejects %s', (_name, candidate) => {
    expect(secretMatches(candidate, stored)).toBe(false);
  });

  it('rejects (without throwing) a stored hash of the wrong length', () => {
    expect(secretMatches(secret, stored.subarray(0, 16))).toBe(false);
    expect(secretMatches(secret, Buffer.alloc(0))).toBe(false);
  });

  it('hashSecret is deterministic SHA-256', () => {
    expect(hashSecret('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
