import { Webhook } from 'standardwebhooks';
import { newSecret, signatureHeader } from './signature';

describe('signatures (Standard Webhooks)', () => {
  it('makes secrets of whsec_ + base64 of 32 random bytes', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(secret);
  });

  it('signs so that the reference verifier accepts, and only with the right secret', () => {
    const secret = newSecret();
    const id = 'b5c1f5d0-8f2e-4b8a-9a47-5c1f0f6b7a11';
    const timestamp = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({
      type: 'conversation.started',
      timestamp: new Date().toISOString(),
      data: { a: 'ż' },
    });
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([secret], id, timestamp, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body + ' ', headers)).toThrow();
  });

  it('during a rotation carries one signature per secret; either verifies', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([current, previous], 'msg', timestamp, '{}');
    expect(header.split(' ')).toHaveLength(2);
    const headers = {
      'webhook-id': 'msg',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': header,
    };
    expect(new Webhook(current).verify('{}', headers)).toEqual({});
    expect(new Webhook(previous).verify('{}', headers)).toEqual({});
  });
});
