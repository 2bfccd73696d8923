import { DomainError } from '@app/errors';
import type { AccountsRepository, KeyRecord } from '../accounts/accounts.repository';
import { generateApiKey } from '../accounts/api-key-format';
import { ApiKeyAuthenticator, AUTH_CACHE_STALE_IF_UNAVAILABLE_MS } from './api-key-authenticator';

/** A key store whose reads the test answers when it chooses, counting them. */
class KeyStore {
  reads = 0;
  private readonly waiting: Array<() => void> = [];
  failure?: Error;

  constructor(readonly records: Map<string, KeyRecord>) {}

  repository(): AccountsRepository {
    return {
      findKey: (keyId: string) =>
        new Promise<KeyRecord | undefined>((resolve, reject) => {
          this.reads += 1;
          this.waiting.push(() => (this.failure ? reject(this.failure) : resolve(this.records.get(keyId))));
        }),
    } as unknown as AccountsRepository;
  }

  answerAll(): void {
    for (const answer of this.waiting.splice(0)) answer();
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('ApiKeyAuthenticator under load', () => {
  const key = generateApiKey();
  const record: KeyRecord = {
    accountId: 'acc-1',
    plan: 'pro',
    secretHash: key.secretHash,
    revoked: false,
    scopes: ['events:read'],
  };
  let store: KeyStore;
  let now: number;

  beforeEach(() => {
    store = new KeyStore(new Map([[key.keyId, record]]));
    now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => jest.restoreAllMocks());

  it('concurrent requests for one uncached key share a single read', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    const pending = Array.from({ length: 50 }, () => auth.authenticate(`Bearer ${key.apiKey}`));
    await flush();
    expect(store.reads).toBe(1);
    store.answerAll();
    const principals = await Promise.all(pending);
    expect(new Set(principals.map((p) => p.accountId))).toEqual(new Set(['acc-1']));
    expect(store.reads).toBe(1);
  });

  it('a key in use is read again in the background before its entry expires: no request ever waits for it', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 4000);
    const first = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await first;
    expect(store.reads).toBe(1);

    now += 3100; // past 3/4 of the TTL: served from the cache, refreshed behind it
    const busy = await Promise.all(
      Array.from({ length: 20 }, () => auth.authenticate(`Bearer ${key.apiKey}`)),
    );
    expect(busy).toHaveLength(20);
    expect(store.reads).toBe(2);
    store.answerAll();
    await flush();

    now += 2000; // past the first entry's expiry, before the refreshed one is due for refresh
    await auth.authenticate(`Bearer ${key.apiKey}`);
    expect(store.reads).toBe(2);
  });

  it('an expired entry is read once however many requests wait for it', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 1000);
    const first = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await first;
    now += 5000;
    const pending = Array.from({ length: 30 }, () => auth.authenticate(`Bearer ${key.apiKey}`));
    await flush();
    expect(store.reads).toBe(2);
    store.answerAll();
    await Promise.all(pending);
  });

  it('a revocation (forget) is not undone by a read that started before it', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    const stale = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    auth.forget({ keyId: key.keyId });
    store.records.set(key.keyId, { ...record, revoked: true });
    store.answerAll(); // answers the stale read with the revoked record too, but it is not cached
    await stale.catch(() => undefined);
    const after = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    expect(store.reads).toBe(2);
    store.answerAll();
    await expect(after).rejects.toMatchObject({ code: 'unauthorized' });
  });

  it("a key's new scopes (forget) apply to the next request, cached until then", async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    const first = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    expect((await first).scopes).toEqual(['events:read']);
    store.records.set(key.keyId, { ...record, scopes: ['events:read', 'webhooks:read'] });
    expect((await auth.authenticate(`Bearer ${key.apiKey}`)).scopes).toEqual(['events:read']);
    auth.forget({ keyId: key.keyId });
    const after = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    expect((await after).scopes).toEqual(['events:read', 'webhooks:read']);
  });

  it('Postgres unreachable is database_unavailable (503), not an authentication failure', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    store.failure = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const attempt = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    const error = await attempt.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect({ code: (error as DomainError).code, status: (error as DomainError).status }).toEqual({
      code: 'database_unavailable',
      status: 503,
    });
  });

  it('while Postgres is unreachable, a key read recently still authenticates past its expiry, for a bounded time', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    const first = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await first;
    store.failure = Object.assign(new Error('Connection terminated unexpectedly'), {});

    now += 5000 + AUTH_CACHE_STALE_IF_UNAVAILABLE_MS - 1;
    const stale = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    expect((await stale).accountId).toBe('acc-1');

    now += 2;
    const tooOld = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await expect(tooOld).rejects.toMatchObject({ code: 'database_unavailable' });
  });

  it('a revoked key is not served from a stale entry when Postgres is unreachable', async () => {
    const auth = new ApiKeyAuthenticator(store.repository(), 5000);
    const first = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await first;
    auth.forget({ keyId: key.keyId });
    store.failure = Object.assign(new Error('Connection terminated unexpectedly'), {});
    now += 6000;
    const attempt = auth.authenticate(`Bearer ${key.apiKey}`);
    await flush();
    store.answerAll();
    await expect(attempt).rejects.toMatchObject({ code: 'database_unavailable' });
  });
});
