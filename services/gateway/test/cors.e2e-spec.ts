import { request } from 'undici';
import { gatewaySchema, loadConfig } from '@app/config';
import { TestStack } from '@app/testing';

/**
 * CORS (docs/api-conventions.md): browsers on the origins in CORS_ORIGINS may call the API; a
 * preflight needs no key; the headers a page needs to read are exposed; bodies that depend on
 * Accept-Language (and Origin) say so in Vary. Any other origin gets no CORS headers at all.
 */

const APP = 'https://app.example.com';
const DEV = 'http://localhost:5173';

async function send(url: string, method: 'GET' | 'OPTIONS' | 'POST', headers: Record<string, string>) {
  const response = await request(url, { method, headers });
  const body = await response.body.text();
  return { status: response.statusCode, headers: response.headers, body };
}

const preflight = (origin: string, method = 'POST') => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': 'authorization,content-type,idempotency-key,accept-language',
});

const varyFields = (headers: Record<string, unknown>) =>
  (Array.isArray(headers.vary)
    ? headers.vary.join(',')
    : typeof headers.vary === 'string'
      ? headers.vary
      : ''
  )
    .split(/\s*,\s*/)
    .filter(Boolean);

describe('CORS for listed origins', () => {
  let stack: TestStack;
  let key: string;

  beforeAll(async () => {
    stack = await TestStack.start({ gateway: { CORS_ORIGINS: `${APP}, ${DEV}` } });
    key = (await stack.createAccount()).apiKey;
  });

  afterAll(() => stack?.close());

  it.each([
    ['/v1/conversations', 'POST'],
    ['/v1/conversations/0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b', 'PATCH'],
    ['/v1/rozmowy/0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b/wiadomo%C5%9Bci', 'POST'],
  ])('answers a preflight for %s (%s) with 204, without a key', async (path, method) => {
    const response = await send(`${stack.url}${path}`, 'OPTIONS', preflight(APP, method));
    expect(response.status).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(String(response.headers['access-control-allow-methods']).split(/\s*,\s*/)).toEqual(
      expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']),
    );
    expect(String(response.headers['access-control-allow-headers']).split(/\s*,\s*/)).toEqual(
      expect.arrayContaining([
        'Authorization',
        'Content-Type',
        'Idempotency-Key',
        'Accept-Language',
        'Last-Event-ID',
      ]),
    );
    expect(Number(response.headers['access-control-max-age'])).toBeGreaterThan(0);
    expect(varyFields(response.headers)).toEqual(
      expect.arrayContaining(['Origin', 'Access-Control-Request-Method']),
    );
  });

  it('lets a listed origin read a response and the headers it needs', async () => {
    const response = await send(`${stack.url}/v1/conversations`, 'GET', {
      origin: DEV,
      authorization: `Bearer ${key}`,
    });
    expect(response.status).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe(DEV);
    expect(String(response.headers['access-control-expose-headers']).split(/\s*,\s*/)).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'RateLimit',
        'RateLimit-Policy',
        'Retry-After',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]),
    );
    expect(varyFields(response.headers)).toEqual(expect.arrayContaining(['Accept-Language', 'Origin']));
    expect(response.headers['x-request-id']).toBeTruthy();
  });

  it('lets a listed origin read the problem of a request without a valid key', async () => {
    const response = await send(`${stack.url}/v1/conversations`, 'GET', { origin: APP });
    expect(response.status).toBe(401);
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(JSON.parse(response.body).code).toBe('unauthorized');
  });

  it('gives an unlisted origin no CORS headers: its preflight goes on to the API and needs a key', async () => {
    const evil = 'https://evil.example.com';
    const flight = await send(`${stack.url}/v1/conversations`, 'OPTIONS', preflight(evil));
    expect(flight.status).toBe(401);
    expect(flight.headers['access-control-allow-origin']).toBeUndefined();
    const read = await send(`${stack.url}/v1/conversations`, 'GET', {
      origin: evil,
      authorization: `Bearer ${key}`,
    });
    expect(read.status).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    expect(read.headers['access-control-expose-headers']).toBeUndefined();
    expect(varyFields(read.headers)).toEqual(expect.arrayContaining(['Accept-Language', 'Origin']));
  });

  it('matches origins exactly: another scheme, port or a suffix is another origin', async () => {
    for (const origin of [
      'http://app.example.com',
      'https://app.example.com:8443',
      'https://app.example.com.evil.net',
    ]) {
      const response = await send(`${stack.url}/v1/conversations`, 'OPTIONS', preflight(origin));
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});

describe('CORS off (the default)', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start();
  });

  afterAll(() => stack?.close());

  it('sends no CORS headers, answers a preflight like any unauthenticated request, and still varies on Accept-Language', async () => {
    const flight = await send(`${stack.url}/v1/conversations`, 'OPTIONS', preflight(APP));
    expect(flight.status).toBe(401);
    expect(flight.headers['access-control-allow-origin']).toBeUndefined();
    expect(varyFields(flight.headers)).toEqual(['Accept-Language']);
  });

  it('refuses a CORS_ORIGINS that is not a list of origins', () => {
    for (const value of ['app.example.com', 'https://app.example.com/path', 'https://a.example.com,*']) {
      expect(() => loadConfig(gatewaySchema, { CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
    }
    expect(loadConfig(gatewaySchema, { CORS_ORIGINS: ` ${APP} ,${DEV}` }).CORS_ORIGINS).toEqual([APP, DEV]);
  });
});
