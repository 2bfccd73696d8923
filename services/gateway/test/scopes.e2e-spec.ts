import { randomUUID } from 'node:crypto';
import { ApiResponse, TestAccount, TestStack, testServices } from '@app/testing';
import { OPERATION_SCOPES, SCOPES, type Scope } from '../src/accounts/scopes';
import { API_ENDPOINTS } from '../src/api-docs/serve-api-docs';
import { pathSpellings } from '../src/http/endpoint';

/**
 * Keys and scopes (docs/api-conventions.md, "Keys and scopes"): every operation, in every path
 * spelling, answers 403 `insufficient_scope` with the RFC 6750 challenge to a key without its
 * scope (the request counted by the rate limit), and serves a key holding only that scope; the
 * CLI creates, lists and changes scopes, and a change applies on every gateway at once.
 */

/** Far longer than the test: a change must arrive by announcement, not by the cache expiring. */
const AUTH_CACHE_TTL_MS = '60000';

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await testServices().runCli(
    argv,
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    { ...process.env, LOG_LEVEL: 'warn' },
  );
  return { code, stdout, stderr };
}

const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('keys and scopes', () => {
  let stack: TestStack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true, gateway: { AUTH_CACHE_TTL_MS } });
    account = await stack.createAccount();
  });
  afterAll(() => stack?.close());

  async function keyWith(scopes: readonly Scope[]) {
    const created = await cli('keys:create', '--account', account.accountId, '--scopes', scopes.join(','));
    expect(created.code).toBe(0);
    return JSON.parse(created.stdout) as { keyId: string; apiKey: string; scopes: Scope[] };
  }

  const call = (apiKey: string, method: string, path: string): Promise<ApiResponse> =>
    stack.api(apiKey).request(method, path.replace(/\{\w+\}/g, randomUUID()));

  it('every operation in every path spelling refuses a key without its scope and serves one with it', async () => {
    const keys = Object.fromEntries(
      await Promise.all(
        SCOPES.map(
          async (scope) => [scope, await keyWith(SCOPES.filter((other) => other !== scope))] as const,
        ),
      ),
    );
    const only = Object.fromEntries(
      await Promise.all(SCOPES.map(async (scope) => [scope, await keyWith([scope])] as const)),
    );
    for (const endpoint of API_ENDPOINTS) {
      const needed = OPERATION_SCOPES[endpoint.operationId];
      for (const path of pathSpellings(endpoint.path)) {
        const refused = await call(keys[needed].apiKey, endpoint.method, path);
        expect({
          operation: endpoint.operationId,
          path,
          status: refused.status,
          code: refused.body.code,
        }).toEqual({ operation: endpoint.operationId, path, status: 403, code: 'insufficient_scope' });
        expect(refused.headers.get('www-authenticate')).toBe(
          `Bearer error="insufficient_scope", scope="${needed}"`,
        );
        // Counted by the rate limit like any authenticated request.
        expect(refused.headers.get('x-ratelimit-remaining')).not.toBeNull();
        const served = await call(only[needed].apiKey, endpoint.method, path);
        expect({
          operation: endpoint.operationId,
          path,
          refused: [401, 403].includes(served.status),
        }).toEqual({
          operation: endpoint.operationId,
          path,
          refused: false,
        });
      }
    }
  });

  it("keys:create defaults to every scope; keys:list shows each key's scopes", async () => {
    const full = await cli('keys:create', '--account', account.accountId);
    expect(JSON.parse(full.stdout).scopes).toEqual([...SCOPES]);
    const restricted = await keyWith(['events:read', 'conversations:read']);
    expect(restricted.scopes).toEqual(['conversations:read', 'events:read']);
    const listed = lines((await cli('keys:list', '--account', account.accountId)).stdout);
    expect(listed.find((key) => key.keyId === restricted.keyId).scopes).toEqual([
      'conversations:read',
      'events:read',
    ]);
    expect(listed.find((key) => key.keyId === account.keyId).scopes).toEqual([...SCOPES]);
  });

  it('refuses an unknown or empty --scopes as a usage error, creating nothing', async () => {
    const before = lines((await cli('keys:list', '--account', account.accountId)).stdout).length;
    for (const scopes of ['conversations:delete', '', ',']) {
      const run = await cli('keys:create', '--account', account.accountId, '--scopes', scopes);
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
      expect(run.stderr).toMatch(/^error: --scopes/);
    }
    expect(lines((await cli('keys:list', '--account', account.accountId)).stdout)).toHaveLength(before);
  });

  it('keys:set-scopes applies on the next request, long before the key cache expires', async () => {
    const key = await keyWith(['conversations:read']);
    const api = stack.api(key.apiKey);
    expect((await api.get('/v1/conversations')).status).toBe(200);
    expect((await api.get('/v1/analytics/summary')).status).toBe(403);
    const changed = await cli('keys:set-scopes', '--key-id', key.keyId, '--scopes', 'analytics:read');
    expect(JSON.parse(changed.stdout)).toEqual({ keyId: key.keyId, scopes: ['analytics:read'] });
    expect((await api.get('/v1/analytics/summary')).status).toBe(200);
    expect((await api.get('/v1/conversations')).status).toBe(403);
    const unknown = await cli('keys:set-scopes', '--key-id', '0123456789abcdef', '--scopes', 'events:read');
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
  });
});
