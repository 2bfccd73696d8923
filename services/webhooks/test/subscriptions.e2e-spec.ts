import SwaggerParser from '@apidevtools/swagger-parser';
import { randomUUID } from 'node:crypto';
import { EVENT_NAMES } from '@app/dialects';
import { ApiResponse, expectProblem, expectValidation, TestAccount, TestStack } from '@app/testing';

/**
 * The subscriptions API (`/v1/webhooks`) through the gateway: shapes, dialects, validation,
 * secrets, idempotency, tenant isolation, OpenAPI, and the webhooks service being away.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const URL = 'http://127.0.0.1:9/hooks';
const ALL_SPELLINGS = ['*', ...Object.values(EVENT_NAMES).flatMap((names) => Object.values(names))];

describe('webhook subscriptions API', () => {
  let stack: TestStack;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount();
  });
  afterAll(() => stack?.close());

  async function create(
    body: Record<string, unknown> = {},
    who: TestAccount = account,
  ): Promise<ApiResponse> {
    const response = await who.api.post('/v1/webhooks', { url: URL, events: ['*'], ...body });
    expect(response.status).toBe(201);
    return response;
  }

  describe('create', () => {
    it('answers 201 with the subscription and its secret, shown in full only now', async () => {
      const response = await create({
        events: ['conversation.started', 'mesej.diterima'],
        description: 'CRM sync',
      });
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        url: URL,
        events: ['conversation.started', 'message.received'],
        dialect: 'en',
        description: 'CRM sync',
        status: 'enabled',
        disabled_reason: null,
        failing_since: null,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
        secret: expect.stringMatching(SECRET),
      });
      const read = await account.api.get(`/v1/webhooks/${response.body.id}`);
      expect(read.status).toBe(200);
      const { secret: _secret, ...withoutSecret } = response.body;
      expect(read.body).toEqual(withoutSecret);
      expect(read.text).not.toContain(response.body.secret);
      const list = await account.api.get('/v1/webhooks?limit=100');
      expect(list.text).not.toContain(response.body.secret);
    });

    it('accepts event names in every dialect, mixed, and stores them once each', async () => {
      const response = await create({
        events: [
          'rozmowa.rozpoczęta',
          'perbualan.dimulakan',
          'wiadomość.odebrana',
          'memimpin.ditawan',
          'perbualan.tertutup',
        ],
        dialect: 'pl',
      });
      expect(response.body.events).toEqual([
        'conversation.closed',
        'conversation.started',
        'lead.captured',
        'message.received',
      ]);
      expect(response.body.dialect).toBe('pl');
    });

    it('renders the events list in the output dialect (Accept-Language)', async () => {
      const { body } = await create({ events: ['conversation.started', 'lead.captured'] });
      const ms = await account.api.get(`/v1/webhooks/${body.id}`, { headers: { 'accept-language': 'ms' } });
      expect(ms.body.events).toEqual(['perbualan.dimulakan', 'memimpin.ditawan']);
      const pl = await account.api.get(`/v1/webhooks/${body.id}`, { headers: { 'accept-language': 'pl' } });
      expect(pl.body.events).toEqual(['rozmowa.rozpoczęta', 'lead.captured']);
    });

    it('takes * to mean the four public events: it replaces them, and the types added since stay beside it', async () => {
      expect((await create({ events: ['conversation.started', '*'] })).body.events).toEqual(['*']);
      expect((await create({ events: ['mesej.dihantar', '*', 'lead.captured'] })).body.events).toEqual([
        '*',
        'message.sent',
      ]);
    });

    it('refuses an unknown event name with a 400 that lists the valid ones', async () => {
      const response = await account.api.post('/v1/webhooks', {
        url: URL,
        events: ['conversation.started', 'conversation.removed'],
      });
      // The second name is the unknown one.
      expectValidation(response, '/v1/webhooks', ['events.1']);
      for (const name of ALL_SPELLINGS) expect(response.body.errors[0].message).toContain(name);
    });

    it.each([
      ['no url', { events: ['*'] }, ['url']],
      ['no events', { url: URL }, ['events']],
      ['empty events', { url: URL, events: [] }, ['events']],
      ['events not strings', { url: URL, events: [1] }, ['events.0']],
      ['not a URL', { url: 'hooks', events: ['*'] }, ['url']],
      ['ftp URL', { url: 'ftp://127.0.0.1/x', events: ['*'] }, ['url']],
      ['credentials in URL', { url: 'http://u:p@127.0.0.1/x', events: ['*'] }, ['url']],
      ['unknown dialect', { url: URL, events: ['*'], dialect: 'fr' }, ['dialect']],
      ['unknown status', { url: URL, events: ['*'], status: 'paused' }, ['status']],
      ['unknown field', { url: URL, events: ['*'], secret: 'whsec_x' }, ['secret']],
      ['long description', { url: URL, events: ['*'], description: 'x'.repeat(501) }, ['description']],
    ])('refuses %s with a 400', async (_name, body, fields) => {
      expectValidation(await account.api.post('/v1/webhooks', body), '/v1/webhooks', fields);
    });

    it('can be created disabled', async () => {
      expect((await create({ status: 'disabled' })).body).toMatchObject({ status: 'disabled' });
    });

    it('replays the same answer, secret included, for a repeated Idempotency-Key', async () => {
      const key = `create-${randomUUID()}`;
      const body = { url: URL, events: ['lead.captured'] };
      const first = await account.api.post('/v1/webhooks', body, { headers: { 'idempotency-key': key } });
      const second = await account.api.post('/v1/webhooks', body, { headers: { 'idempotency-key': key } });
      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers.get('idempotent-replayed')).toBe('true');
      expect(second.body).toEqual(first.body);
      const rows = await stack.query(`SELECT count(*)::int AS n FROM webhooks.subscriptions WHERE id = $1`, [
        first.body.id,
      ]);
      expect(rows[0].n).toBe(1);
    });
  });

  describe('list', () => {
    it('pages newest first with limit/offset in any spelling and a total', async () => {
      const owner = await stack.createAccount();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await create({ description: `n${i}` }, owner)).body.id);
      const first = await owner.api.get('/v1/webhooks?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.pagination).toEqual({ limit: 2, offset: 0, total: 5 });
      expect(first.body.data.map((w: any) => w.id)).toEqual([ids[4], ids[3]]);
      const second = await owner.api.get('/v1/webhooks?had=2&mengimbangi=2');
      expect(second.body.data.map((w: any) => w.id)).toEqual([ids[2], ids[1]]);
      const third = await owner.api.get(`/v1/webhooks?limit=2&${encodeURIComponent('przesunięcie')}=4`);
      expect(third.body.data.map((w: any) => w.id)).toEqual([ids[0]]);
      expect((await owner.api.get('/v1/webhooks')).body.pagination).toEqual({
        limit: 20,
        offset: 0,
        total: 5,
      });
    });

    it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=x', 'limit=5&had=6'])(
      'refuses %s',
      async (query) => {
        const response = await account.api.get(`/v1/webhooks?${query}`);
        expect({ status: response.status, code: response.body.code }).toEqual({
          status: 400,
          code: 'validation_failed',
        });
      },
    );
  });

  describe('update and delete', () => {
    it('changes url, events, dialect and description; an empty PATCH changes nothing', async () => {
      const { body } = await create();
      const patched = await account.api.patch(`/v1/webhooks/${body.id}`, {
        url: 'http://127.0.0.1:10/other',
        events: ['rozmowa.zamknięta'],
        dialect: 'ms',
        description: null,
      });
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({
        url: 'http://127.0.0.1:10/other',
        events: ['conversation.closed'],
        dialect: 'ms',
        description: null,
      });
      expect(patched.body.secret).toBeUndefined();
      expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(body.updated_at));
      const same = await account.api.patch(`/v1/webhooks/${body.id}`, {});
      expect(same.status).toBe(200);
      expect(same.body).toEqual(patched.body);
    });

    it('disables and enables', async () => {
      const { body } = await create();
      const disabled = await account.api.patch(`/v1/webhooks/${body.id}`, { status: 'disabled' });
      expect(disabled.body).toMatchObject({ status: 'disabled', disabled_reason: 'disabled_by_user' });
      const enabled = await account.api.patch(`/v1/webhooks/${body.id}`, { status: 'enabled' });
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: null });
    });

    it('refuses bad changes with a 400', async () => {
      const { body } = await create();
      const path = `/v1/webhooks/${body.id}`;
      expectValidation(await account.api.patch(path, { events: ['nope'] }), path, ['events.0']);
      expectValidation(await account.api.patch(path, { url: 'gopher://x' }), path, ['url']);
      expectValidation(await account.api.patch(path, { status: 'off' }), path, ['status']);
    });

    it('deletes (204), after which the webhook is a 404 everywhere', async () => {
      const { body } = await create();
      const path = `/v1/webhooks/${body.id}`;
      const deleted = await account.api.request('DELETE', path);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      expectProblem(await account.api.get(path), 404, 'not_found', path);
      expectProblem(await account.api.request('DELETE', path), 404, 'not_found', path);
    });
  });

  describe('secret rotation', () => {
    it('returns a new secret once; reads never show it', async () => {
      const { body } = await create();
      const rotated = await account.api.post(`/v1/webhooks/${body.id}/secret/rotate`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(SECRET);
      expect(rotated.body.secret).not.toBe(body.secret);
      expect(rotated.body.id).toBe(body.id);
      expect((await account.api.get(`/v1/webhooks/${body.id}`)).text).not.toContain(rotated.body.secret);
    });
  });

  describe('ids', () => {
    it.each(['not-a-uuid', '123', randomUUID()])('%s is a 404 on every route', async (id) => {
      const delivery = randomUUID();
      for (const [method, path] of [
        ['GET', `/v1/webhooks/${id}`],
        ['PATCH', `/v1/webhooks/${id}`],
        ['DELETE', `/v1/webhooks/${id}`],
        ['POST', `/v1/webhooks/${id}/secret/rotate`],
        ['POST', `/v1/webhooks/${id}/test`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['GET', `/v1/webhooks/${id}/deliveries/${delivery}`],
        ['POST', `/v1/webhooks/${id}/deliveries/${delivery}/retry`],
      ]) {
        const response = await account.api.request(
          method,
          path,
          method === 'GET' || method === 'DELETE' ? {} : { body: {} },
        );
        expectProblem(response, 404, 'not_found', path);
      }
    });
  });

  describe('tenant isolation', () => {
    it("account B can neither see nor touch A's webhooks or deliveries", async () => {
      const a = await stack.createAccount();
      const b = await stack.createAccount();
      const hook = (await create({ events: ['conversation.started'] }, a)).body;
      const test = await a.api.post(`/v1/webhooks/${hook.id}/test`);
      expect(test.status).toBe(202);
      const deliveryId = test.body.id;
      const before = (await a.api.get(`/v1/webhooks/${hook.id}`)).body;

      expect((await b.api.get('/v1/webhooks')).body).toEqual({
        data: [],
        pagination: { limit: 20, offset: 0, total: 0 },
      });
      for (const [method, path, body] of [
        ['GET', `/v1/webhooks/${hook.id}`],
        ['PATCH', `/v1/webhooks/${hook.id}`, { status: 'disabled', url: 'http://127.0.0.1:11/stolen' }],
        ['DELETE', `/v1/webhooks/${hook.id}`],
        ['POST', `/v1/webhooks/${hook.id}/secret/rotate`, {}],
        ['POST', `/v1/webhooks/${hook.id}/test`, {}],
        ['GET', `/v1/webhooks/${hook.id}/deliveries`],
        ['GET', `/v1/webhooks/${hook.id}/deliveries/${deliveryId}`],
        ['POST', `/v1/webhooks/${hook.id}/deliveries/${deliveryId}/retry`, {}],
      ] as Array<[string, string, unknown?]>) {
        expectProblem(
          await b.api.request(method, path, body === undefined ? {} : { body }),
          404,
          'not_found',
          path,
        );
      }
      // B's own webhook with A's delivery id: still nothing.
      const own = (await create({}, b)).body;
      const crossed = `/v1/webhooks/${own.id}/deliveries/${deliveryId}`;
      expectProblem(await b.api.get(crossed), 404, 'not_found', crossed);
      expectProblem(await b.api.post(`${crossed}/retry`), 404, 'not_found', `${crossed}/retry`);

      // (failing_since may have been set meanwhile: the test send goes to a closed port)
      const after = (await a.api.get(`/v1/webhooks/${hook.id}`)).body;
      expect({ ...after, failing_since: null }).toEqual({ ...before, failing_since: null });
      expect((await a.api.get(`/v1/webhooks/${hook.id}/deliveries`)).body.pagination.total).toBe(1);
    });
  });

  describe('deliveries list', () => {
    it('filters by status and refuses unknown ones', async () => {
      const { body } = await create();
      const path = `/v1/webhooks/${body.id}/deliveries`;
      expect((await account.api.get(`${path}?status=failed`)).body).toEqual({
        data: [],
        pagination: { limit: 20, offset: 0, total: 0 },
      });
      expectValidation(await account.api.get(`${path}?status=done`), path, ['status']);
      expectValidation(await account.api.get(`${path}?status=failed&stan=pending`), path, ['status']);
    });
  });

  it('needs an API key like every endpoint', async () => {
    const response = await stack.api().get('/v1/webhooks');
    expectProblem(response, 401, 'unauthorized', '/v1/webhooks');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('is in the OpenAPI document', async () => {
    const body = await SwaggerParser.dereference((await stack.api().get('/openapi.json')).body);
    expect(Object.keys(body.paths!)).toEqual(
      expect.arrayContaining([
        '/v1/webhooks',
        '/v1/webhooks/{id}',
        '/v1/webhooks/{id}/secret/rotate',
        '/v1/webhooks/{id}/test',
        '/v1/webhooks/{id}/deliveries',
        '/v1/webhooks/{id}/deliveries/{deliveryId}',
        '/v1/webhooks/{id}/deliveries/{deliveryId}/retry',
      ]),
    );
    expect(Object.keys((body.paths as any)['/v1/webhooks/{id}']).sort()).toEqual(['delete', 'get', 'patch']);
    const create = (body.paths as any)['/v1/webhooks'].post;
    expect(create.operationId).toBe('createWebhook');
    expect(Object.keys(create.responses['201'].content['application/json'].schema.properties)).toContain(
      'secret',
    );
    expect(create.requestBody.content['application/json'].schema.properties.events.items.examples).toEqual(
      expect.arrayContaining(ALL_SPELLINGS),
    );
    expect(create.responses['400']).toBeDefined();
  });

  it('answers 503 at once while the webhooks service is away, and recovers when it is back', async () => {
    await stack.stopWebhooks();
    try {
      const started = Date.now();
      const response = await account.api.get('/v1/webhooks');
      expectProblem(response, 503, 'service_unavailable', '/v1/webhooks');
      expect(response.body.detail).toContain('webhooks service');
      expect(Date.now() - started).toBeLessThan(2000);
      // the conversations API is unaffected
      expect((await account.api.get('/v1/conversations')).status).toBe(200);
    } finally {
      await stack.startWebhooks();
    }
    // The gateway does not trust its earlier "no consumer": the first request after the start is served.
    expect((await account.api.get('/v1/webhooks')).status).toBe(200);
  });
});
