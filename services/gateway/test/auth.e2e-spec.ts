import { randomBytes } from 'node:crypto';
import { ApiResponse, eventually, PACKAGE_VERSION, TestAccount, TestStack } from '@app/testing';

/**
 * API-key authentication (docs/api-conventions.md): every /v1 request needs
 * `Authorization: Bearer <key>`; anything else is a 401 problem with `WWW-Authenticate: Bearer`,
 * decided before the body is looked at (401 comes before 415, 413 and 400).
 */

const AUTH_CACHE_TTL_MS = 200;

const MISSING = 'The Authorization header is missing.';
const WRONG_SCHEME = 'Use the Bearer scheme: Authorization: Bearer <API key>.';
const MALFORMED = 'The API key is malformed.';
const INVALID = 'The API key is not valid.';
const REVOKED = 'The API key has been revoked.';

function expectUnauthorized(res: ApiResponse, instance: string, detail: string): void {
  expect(res.status).toBe(401);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer(\s|$)/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(res.body).toEqual({
    type: '/problems/unauthorized',
    title: 'Missing or invalid API key',
    status: 401,
    detail,
    code: 'unauthorized',
    request_id: requestId,
    instance,
  });
  // A 401 is never rate limited or counted: it must not carry an account's quota either.
  expect(res.headers.get('ratelimit')).toBeNull();
}

/** `cms_<16 hex>_<43 base64url>`: the shape of a real key, with random content. */
function randomWellFormedKey(keyId = randomBytes(8).toString('hex')): string {
  return `cms_${keyId}_${randomBytes(32).toString('base64url')}`;
}

function splitKey(apiKey: string): { keyId: string; secret: string } {
  const match = /^cms_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/.exec(apiKey);
  if (!match) throw new Error(`unexpected key shape ${apiKey}`);
  return { keyId: match[1], secret: match[2] };
}

/** Flips one character of the secret, keeping the key well formed. */
function withWrongSecret(apiKey: string): string {
  const { keyId, secret } = splitKey(apiKey);
  const last = secret[secret.length - 1];
  return `cms_${keyId}_${secret.slice(0, -1)}${last === 'A' ? 'B' : 'A'}`;
}

describe('API-key authentication', () => {
  let stack: TestStack;
  let account: TestAccount;
  let other: TestAccount;
  let conversationId: string;

  beforeAll(async () => {
    stack = await TestStack.start({ gateway: { AUTH_CACHE_TTL_MS: String(AUTH_CACHE_TTL_MS) } });
    account = await stack.createAccount('business');
    other = await stack.createAccount('business');
    const created = await account.api.post('/v1/conversations', { subject: 'auth' });
    expect(created.status).toBe(201);
    conversationId = created.body.id;
  });
  afterAll(() => stack?.close());

  const countConversations = async () =>
    Number((await stack.query(`SELECT count(*)::int AS n FROM conversations.conversations`))[0].n);

  it('accepts a valid key (control for every 401 below)', async () => {
    const res = await stack.api().get('/v1/conversations', { apiKey: account.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(1);
  });

  it('accepts the scheme name in any case and surrounding whitespace (RFC 9110: schemes are case-insensitive)', async () => {
    for (const authorization of [
      `bearer ${account.apiKey}`,
      `BEARER ${account.apiKey}`,
      `Bearer   ${account.apiKey}  `,
    ]) {
      const res = await stack.api().get('/v1/conversations', { apiKey: null, headers: { authorization } });
      expect({ authorization, status: res.status }).toEqual({ authorization, status: 200 });
    }
  });

  type Case = [name: string, authorization: () => string | undefined, detail: string];
  const cases: Case[] = [
    ['no Authorization header', () => undefined, MISSING],
    ['Basic scheme', () => `Basic ${Buffer.from('user:pass').toString('base64')}`, WRONG_SCHEME],
    ['Basic scheme carrying a valid key', () => `Basic ${account.apiKey}`, WRONG_SCHEME],
    ['Token scheme carrying a valid key', () => `Token ${account.apiKey}`, WRONG_SCHEME],
    ['the bare key without a scheme', () => account.apiKey, WRONG_SCHEME],
    ['Bearer with an empty token', () => 'Bearer', MALFORMED],
    ['Bearer followed by blanks only', () => 'Bearer    ', MALFORMED],
    ['Bearer with a trailing extra token', () => `Bearer ${account.apiKey} extra`, WRONG_SCHEME],
    ['Bearer with a random string', () => 'Bearer not-an-api-key', MALFORMED],
    ['Bearer with the key quoted', () => `Bearer "${account.apiKey}"`, MALFORMED],
    ['Bearer with the key upper-cased', () => `Bearer ${account.apiKey.toUpperCase()}`, MALFORMED],
    ['Bearer with the secret one character short', () => `Bearer ${account.apiKey.slice(0, -1)}`, MALFORMED],
    ['Bearer with the secret one character long', () => `Bearer ${account.apiKey}A`, MALFORMED],
    ['Bearer with another prefix', () => `Bearer sk_${account.apiKey.slice(4)}`, MALFORMED],
    ['Bearer with a 10000-character token', () => `Bearer ${'a'.repeat(10_000)}`, MALFORMED],
    ['a well-formed but unknown key', () => `Bearer ${randomWellFormedKey()}`, INVALID],
    ['a known key id with a wrong secret', () => `Bearer ${withWrongSecret(account.apiKey)}`, INVALID],
    [
      "a known key id with another key's secret",
      () => `Bearer cms_${splitKey(account.apiKey).keyId}_${splitKey(other.apiKey).secret}`,
      INVALID,
    ],
  ];

  it.each(cases)('401 for %s', async (_name, authorization, detail) => {
    const auth = authorization();
    const res = await stack
      .api()
      .get('/v1/conversations', { apiKey: null, headers: auth === undefined ? {} : { authorization: auth } });
    expectUnauthorized(res, '/v1/conversations', detail);
  });

  it('401 on every /v1 route, known or not, for every method', async () => {
    // The last three are not API operations: outside the OpenAPI document on purpose.
    const routes: Array<[string, string, boolean?]> = [
      ['GET', `/v1/conversations/${conversationId}`],
      ['POST', '/v1/conversations'],
      ['POST', `/v1/conversations/${conversationId}/messages`],
      ['POST', `/v1/rozmowy/${conversationId}/wiadomości`],
      ['PATCH', `/v1/conversations/${conversationId}`],
      ['POST', `/v1/conversations/${conversationId}/lead`],
      ['GET', '/v1/no-such-route', false],
      ['DELETE', `/v1/conversations/${conversationId}`, false],
      ['GET', '/v1', false],
    ];
    for (const [method, path, contract] of routes) {
      const res = await stack.api().request(method, path, { apiKey: randomWellFormedKey(), contract });
      expectUnauthorized(res, new URL(path, stack.url).pathname, INVALID);
    }
  });

  describe('authentication comes before request shape (415, 413, 400) and existence (404)', () => {
    const ONE_MIB = 1024 * 1024;
    type ShapeCase = [
      name: string,
      method: string,
      path: string,
      rawBody: string | undefined,
      contentType: string | undefined,
    ];
    const shapeCases: ShapeCase[] = [
      ['a text/plain body', 'POST', '/v1/conversations', 'hello', 'text/plain'],
      ['a form body', 'POST', '/v1/conversations', 'subject=x', 'application/x-www-form-urlencoded'],
      ['an XML body', 'POST', '/v1/conversations', '<subject>x</subject>', 'application/xml'],
      [
        'an oversized JSON body',
        'POST',
        '/v1/conversations',
        JSON.stringify({ subject: 'x'.repeat(2 * ONE_MIB) }),
        'application/json',
      ],
      ['an oversized text/plain body', 'POST', '/v1/conversations', 'x'.repeat(2 * ONE_MIB), 'text/plain'],
      ['malformed JSON', 'POST', '/v1/conversations', '{"subject":', 'application/json'],
      ['a JSON array', 'POST', '/v1/conversations', '[]', 'application/json'],
      ['an invalid field', 'POST', '/v1/conversations', '{"subject":1,"foo":2}', 'application/json'],
      [
        'an invalid PATCH',
        'PATCH',
        '/v1/conversations/00000000-0000-4000-8000-000000000000',
        '{"status":9}',
        'application/json',
      ],
      ['an invalid list query', 'GET', '/v1/conversations?limit=0&status=nope', undefined, undefined],
      [
        'an unknown conversation',
        'GET',
        '/v1/conversations/00000000-0000-4000-8000-000000000000',
        undefined,
        undefined,
      ],
      ['a non-UUID id', 'GET', '/v1/conversations/not-a-uuid', undefined, undefined],
    ];

    it.each(shapeCases)(
      '401, not 4xx, for %s without a key and with a bad key',
      async (_name, method, path, rawBody, contentType) => {
        const before = await countConversations();
        const headers = contentType ? { 'content-type': contentType } : undefined;
        const pathname = new URL(path, stack.url).pathname;
        const anonymous = await stack.api().request(method, path, { apiKey: null, rawBody, headers });
        expectUnauthorized(anonymous, pathname, MISSING);
        const badKey = await stack
          .api()
          .request(method, path, { apiKey: randomWellFormedKey(), rawBody, headers });
        expectUnauthorized(badKey, pathname, INVALID);
        const wrongSecret = await stack
          .api()
          .request(method, path, { apiKey: withWrongSecret(account.apiKey), rawBody, headers });
        expectUnauthorized(wrongSecret, pathname, INVALID);
        expect(await countConversations()).toBe(before);
      },
    );
  });

  describe('public endpoints need no key', () => {
    it.each([
      ['no Authorization header', undefined],
      ['a garbage Authorization header', 'Bearer garbage'],
      ['an unknown well-formed key', `Bearer ${randomWellFormedKey()}`],
    ])('with %s', async (_name, authorization) => {
      const headers = authorization ? { authorization } : undefined;
      const live = await stack.api().get('/health/live', { apiKey: null, headers });
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok', version: PACKAGE_VERSION });
      expect(live.headers.get('www-authenticate')).toBeNull();

      const ready = await stack.api().get('/health/ready', { apiKey: null, headers });
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ok' });

      const openapi = await stack.api().get('/openapi.json', { apiKey: null, headers });
      expect(openapi.status).toBe(200);
      expect(openapi.headers.get('content-type')).toMatch(/^application\/json/);
      expect(openapi.body.openapi).toMatch(/^3\./);
      expect(Object.keys(openapi.body.paths)).toEqual(
        expect.arrayContaining(['/v1/conversations', '/v1/conversations/{id}']),
      );
      expect(openapi.body.components.securitySchemes).toBeDefined();

      const docs = await stack.api().get('/docs', { apiKey: null, headers });
      expect(docs.status).toBe(200);
      expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    });
  });

  describe('several keys per account', () => {
    it('a second key of the same account sees and changes the same data; the first keeps working', async () => {
      const second = await stack.accountsRepository().createKey(account.accountId);
      expect(second.keyId).not.toBe(account.keyId);
      expect(second.apiKey).not.toBe(account.apiKey);
      const api2 = stack.api(second.apiKey);

      const read = await api2.get(`/v1/conversations/${conversationId}`);
      expect(read.status).toBe(200);
      expect(read.body.id).toBe(conversationId);

      const created = await api2.post('/v1/conversations', { subject: 'via second key' });
      expect(created.status).toBe(201);
      const viaFirst = await account.api.get(`/v1/conversations/${created.body.id}`);
      expect(viaFirst.status).toBe(200);
      expect(viaFirst.body.subject).toBe('via second key');

      const list1 = await account.api.get('/v1/conversations');
      const list2 = await api2.get('/v1/conversations');
      expect(list1.body.pagination.total).toBe(2);
      expect(list2.body.pagination.total).toBe(2);
      expect(list2.body.data.map((c: { id: string }) => c.id)).toEqual(
        list1.body.data.map((c: { id: string }) => c.id),
      );
    });

    it("another account's key gets a 404 for this account's conversation, never its data", async () => {
      const res = await other.api.get(`/v1/conversations/${conversationId}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
      expect(res.body).toMatchObject({
        status: 404,
        code: 'not_found',
        request_id: res.headers.get('x-request-id'),
      });
      expect(res.text).not.toContain('"subject"');
    });
  });

  describe('revocation', () => {
    it(`a revoked key stops working within AUTH_CACHE_TTL_MS (${AUTH_CACHE_TTL_MS} ms); the account's other keys keep working`, async () => {
      const victim = await stack.accountsRepository().createKey(account.accountId);
      const survivor = await stack.accountsRepository().createKey(account.accountId);
      // Warm the cache, so the revocation has to outlive a cached "valid" entry.
      expect((await stack.api(victim.apiKey).get('/v1/conversations')).status).toBe(200);

      expect(await stack.accountsRepository().revokeKey(victim.keyId)).toBe(true);
      const revokedAt = Date.now();
      const res = await eventually(
        async () => {
          const attempt = await stack.api(victim.apiKey).get('/v1/conversations');
          if (attempt.status !== 401)
            throw new Error(`still ${attempt.status} ${Date.now() - revokedAt} ms after revocation`);
          return attempt;
        },
        AUTH_CACHE_TTL_MS + 1_000,
        20,
      );
      expect(Date.now() - revokedAt).toBeLessThan(AUTH_CACHE_TTL_MS + 1_000);
      expectUnauthorized(res, '/v1/conversations', REVOKED);

      // Stays revoked (not a cache flicker), on writes too, and creates nothing.
      const before = await countConversations();
      for (let i = 0; i < 3; i++) {
        expectUnauthorized(
          await stack.api(victim.apiKey).post('/v1/conversations', {}),
          '/v1/conversations',
          REVOKED,
        );
      }
      expect(await countConversations()).toBe(before);

      // Someone without the secret learns nothing about the key's state.
      const guessed = await stack.api(withWrongSecret(victim.apiKey)).get('/v1/conversations');
      expectUnauthorized(guessed, '/v1/conversations', INVALID);

      expect((await stack.api(survivor.apiKey).get('/v1/conversations')).status).toBe(200);
      expect((await account.api.get('/v1/conversations')).status).toBe(200);
    });

    it('revoking is final: revoking twice reports no active key', async () => {
      const key = await stack.accountsRepository().createKey(account.accountId);
      expect(await stack.accountsRepository().revokeKey(key.keyId)).toBe(true);
      expect(await stack.accountsRepository().revokeKey(key.keyId)).toBe(false);
      await eventually(
        async () => (await stack.api(key.apiKey).get('/v1/conversations')).status === 401,
        AUTH_CACHE_TTL_MS + 1_000,
        20,
      );
    });
  });
});
