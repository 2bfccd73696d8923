import { randomBytes } from 'node:crypto';
import { DEVELOPMENT_KEY, SecretCipher, secretsKeyring } from './secret-cipher';

const key = (id: string) => ({ id, key: randomBytes(32) });
const SUBSCRIPTION = '0b6f3c51-5c1b-4a43-9d07-8a5f3f0c2b1e';
const OTHER_SUBSCRIPTION = '5d0c9f1e-3a52-4a8e-b8a4-2f6d6c1e7a90';
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

describe('SecretCipher', () => {
  const current = key('current');
  const old = key('old');

  it('encrypts with the first key, naming it, and decrypts what it encrypted', () => {
    const cipher = new SecretCipher([current, old]);
    const stored = cipher.encrypt(SECRET, SUBSCRIPTION);
    expect(stored.split(':')[0]).toBe('current');
    expect(stored).not.toContain(SECRET.slice('whsec_'.length));
    expect(cipher.decrypt(stored, SUBSCRIPTION)).toBe(SECRET);
  });

  it('gives a new ciphertext each time (a random IV)', () => {
    const cipher = new SecretCipher([current]);
    expect(cipher.encrypt(SECRET, SUBSCRIPTION)).not.toBe(cipher.encrypt(SECRET, SUBSCRIPTION));
  });

  it('decrypts with any configured key: what an older key encrypted still opens', () => {
    const stored = new SecretCipher([old]).encrypt(SECRET, SUBSCRIPTION);
    expect(new SecretCipher([current, old]).decrypt(stored, SUBSCRIPTION)).toBe(SECRET);
  });

  it('refuses a ciphertext moved to another subscription (the id is associated data)', () => {
    const cipher = new SecretCipher([current]);
    const stored = cipher.encrypt(SECRET, SUBSCRIPTION);
    expect(() => cipher.decrypt(stored, OTHER_SUBSCRIPTION)).toThrow();
  });

  it('refuses a tampered ciphertext', () => {
    const cipher = new SecretCipher([current]);
    const [id, iv, tag, body] = cipher.encrypt(SECRET, SUBSCRIPTION).split(':');
    const flipped = Buffer.from(body, 'base64');
    flipped[0] ^= 1;
    expect(() => cipher.decrypt([id, iv, tag, flipped.toString('base64')].join(':'), SUBSCRIPTION)).toThrow();
  });

  it('names the missing key when a ciphertext is under a key it does not hold, never the secret', () => {
    const stored = new SecretCipher([old]).encrypt(SECRET, SUBSCRIPTION);
    expect(() => new SecretCipher([current]).decrypt(stored, SUBSCRIPTION)).toThrow(
      'a secret is encrypted with key "old", which SECRETS_ENCRYPTION_KEYS does not hold',
    );
  });

  it('always opens what the public development key encrypted, so it can be moved to a real key', () => {
    const stored = new SecretCipher([DEVELOPMENT_KEY]).encrypt(SECRET, SUBSCRIPTION);
    expect(new SecretCipher([current]).decrypt(stored, SUBSCRIPTION)).toBe(SECRET);
  });
});

describe('secretsKeyring', () => {
  it('is the configured keys when there are any', () => {
    const keys = [key('a')];
    expect(secretsKeyring(keys)).toEqual({ keys, development: false });
  });

  it('is the development key, flagged, when none are configured', () => {
    expect(secretsKeyring([])).toEqual({ keys: [DEVELOPMENT_KEY], development: true });
  });
});
