import { randomUUID } from 'node:crypto';
import { ApiResponse, TestAccount, TestStack } from '@app/testing';
import { API_ENDPOINTS } from '../src/api-docs/serve-api-docs';
import { type Endpoint, pathSpellings } from '../src/http/endpoint';

/**
 * An empty body is no body, Content-Type or not: HTTP wrappers that always send
 * `Content-Type: application/json` call every POST whose body is optional as if they had sent
 * nothing, and an operation that needs a body answers what it answers to none (the missing fields).
 * Every operation is taken from the endpoint table, so a new one is covered as it is added.
 */

const JSON_HEADERS = { 'content-type': 'application/json' };
const ENDPOINTS: Endpoint[] = API_ENDPOINTS;
const OPTIONAL = ENDPOINTS.filter((e) => e.method === 'POST' && e.body && !e.bodyRequired);
const REQUIRED = ENDPOINTS.filter((e) => e.body && e.bodyRequired);
const forms = (endpoints: Endpoint[]) =>
  endpoints.flatMap((endpoint) => pathSpellings(endpoint.path).map((path) => [path, endpoint] as const));

describe('empty request bodies', () => {
  let stack: TestStack;
  let account: TestAccount;
  let conversationId: string;

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount('business');
    conversationId = (await account.api.post('/v1/conversations', { subject: 'Target' })).body.id;
  });
  afterAll(() => stack?.close());

  /** The path with real ids: a fresh webhook for webhook paths, the conversation otherwise. */
  async function concrete(path: string): Promise<string> {
    const webhook = path.startsWith('/v1/webhooks/')
      ? (await account.api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', events: ['*'] })).body.id
      : undefined;
    return path.replace('{id}', webhook ?? conversationId).replace('{deliveryId}', randomUUID());
  }

  const send = async (path: string, rawBody?: string, method = 'POST'): Promise<ApiResponse> =>
    account.api.request(method, path, { rawBody, headers: rawBody === undefined ? {} : JSON_HEADERS });

  it('covers every POST whose body is optional', () => {
    expect(OPTIONAL.map((e) => e.operationId)).toEqual(
      expect.arrayContaining(['createConversation', 'rotateWebhookSecret', 'testWebhook']),
    );
  });

  it.each(forms(OPTIONAL))(
    'POST %s: an empty JSON body is answered as no body, and as `{}`',
    async (path, endpoint) => {
      const empty = await send(await concrete(path), '');
      const none = await send(await concrete(path));
      const object = await send(await concrete(path), '{}');
      expect([empty.status, none.status, object.status]).toEqual(
        Array(3).fill(path.includes('{deliveryId}') ? 404 : endpoint.status),
      );
    },
  );

  it.each(forms(REQUIRED))('%s: an empty JSON body is answered as no body', async (path, endpoint) => {
    const target = await concrete(path);
    const empty = await send(target, '', endpoint.method);
    const none = await send(target, undefined, endpoint.method);
    expect({ status: empty.status, errors: empty.body?.errors }).toEqual({
      status: none.status,
      errors: none.body?.errors,
    });
    expect(empty.body?.code).not.toBe('invalid_json');
  });
});
