import { randomUUID } from 'node:crypto';
import { createLogger } from '@app/observability';
import {
  ApiClient,
  DependencyProxies,
  eventually,
  expectLive,
  PACKAGE_VERSION,
  expectNotReady,
  expectReadinessFollowsOutage,
  expectReady,
  PrometheusText,
  readinessAnswering,
  TestStack,
} from '@app/testing';
import { RunningGateway, startGateway } from '../src/gateway-service';

/**
 * The gateway's /health/live, /health/ready and /metrics (docs/operations.md), on its own
 * port. Its Postgres, RabbitMQ and Redis are reached through TCP proxies of this file's own, so a
 * dependency can be made unreachable for this gateway alone and brought back.
 */

const CHECKS = ['postgres', 'rabbitmq', 'redis', 'shutdown'];

describe('gateway health and metrics', () => {
  let stack: TestStack;
  let dependencies: DependencyProxies;
  let openGateway: RunningGateway | undefined;

  beforeAll(async () => {
    dependencies = await DependencyProxies.start();
    stack = await TestStack.start({
      gateway: {
        ...dependencies.routes(),
        // Counters of this file's own: other files' failed authentications from 127.0.0.1 stay out.
        REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}monitoring:`,
        RATE_LIMIT_FAIL_MODE: 'closed',
        RATE_LIMIT_TRIAL: '2',
        RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2',
      },
    });
  });
  afterAll(async () => {
    await openGateway?.close();
    await stack?.close();
    await dependencies?.close();
  });

  const scrape = (url = stack.url) => PrometheusText.scrape(url);

  it('/health/live and /health/ready answer 200 with Postgres, RabbitMQ and Redis up', async () => {
    await expectLive(stack.url);
    expect((await scrape()).value('cms_build_info', { version: PACKAGE_VERSION })).toBe(1);
    const body = await expectReady(stack.url, CHECKS);
    expect(Object.keys(body.details).sort()).toEqual([...CHECKS].sort());
  });

  it('/metrics is public Prometheus text with process metrics; health and metrics are not in the OpenAPI document', async () => {
    for (const authorization of [undefined, 'Bearer not-a-key']) {
      const response = await fetch(`${stack.url}/metrics`, {
        headers: authorization ? { authorization } : {},
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(response.headers.get('www-authenticate')).toBeNull();
      expect(response.headers.get('ratelimit')).toBeNull();
    }
    const metrics = await scrape();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect({ name, declared: metrics.declares(name) }).toEqual({ name, declared: true });
    }
    const paths = Object.keys((await stack.api().get('/openapi.json', { apiKey: null })).body.paths);
    expect(paths.filter((path) => /health|metrics/.test(path))).toEqual([]);
  });

  it('counts HTTP requests and their latency by method, route template and status, and RPC calls by outcome', async () => {
    const { api, apiKey } = await stack.createAccount('business');
    const before = await scrape();
    const created = await api.post('/v1/conversations', { subject: 'Metrics' });
    expect(created.status).toBe(201);
    const unknownId = randomUUID();
    expect((await api.get(`/v1/conversations/${unknownId}`)).status).toBe(404);
    expect((await api.get(`/v1/conversations/${created.body.id}`)).status).toBe(200);
    // (fetch: the API client would check the answer against the OpenAPI document, which has no such path)
    const unmatched = await fetch(`${stack.url}/v1/no-such-endpoint`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(unmatched.status).toBe(404);
    const after = await scrape();

    const requests = (method: string, route: string, status: string) =>
      after.since(before, 'cms_http_requests_total', { method, route, status });
    expect({
      created: requests('POST', '/v1/conversations', '201'),
      notFound: requests('GET', '/v1/conversations/:id', '404'),
      found: requests('GET', '/v1/conversations/:id', '200'),
      unmatched: requests('GET', 'unmatched', '404'),
    }).toEqual({ created: 1, notFound: 1, found: 1, unmatched: 1 });
    const latency = { method: 'POST', route: '/v1/conversations', status: '201' };
    expect(after.since(before, 'cms_http_request_duration_seconds_count', latency)).toBe(1);
    expect(after.since(before, 'cms_http_request_duration_seconds_bucket', { ...latency, le: '+Inf' })).toBe(
      1,
    );
    // Route templates only: no id ever becomes a label value.
    expect(after.text).not.toContain(unknownId);
    expect(after.text).not.toContain(created.body.id);

    const rpc = (pattern: string, outcome: string) =>
      after.since(before, 'cms_rpc_client_duration_seconds_count', {
        service: 'conversations',
        pattern,
        outcome,
      });
    expect({
      create: rpc('conversations.create', 'ok'),
      missing: rpc('conversations.get', 'error_reply'),
    }).toEqual({
      create: 1,
      missing: 1,
    });
    expect(after.declares('cms_rpc_client_timeouts_total')).toBe(true);
  });

  it('counts 429s by kind: an account over its plan, an address over its failed authentications', async () => {
    const { api } = await stack.createAccount('trial');
    const before = await scrape();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await api.get('/v1/conversations')).status);
    for (let i = 0; i < 3; i++)
      statuses.push((await api.get('/v1/conversations', { apiKey: 'not-a-key' })).status);
    expect(statuses).toEqual([200, 200, 429, 401, 401, 429]);
    const after = await scrape();
    expect({
      plan: after.since(before, 'cms_rate_limit_rejections_total', { kind: 'plan' }),
      unauthenticated: after.since(before, 'cms_rate_limit_rejections_total', { kind: 'unauthenticated' }),
      responses: after.since(before, 'cms_http_requests_total', {
        route: '/v1/conversations',
        status: '429',
      }),
    }).toEqual({ plan: 1, unauthenticated: 1, responses: 2 });
  });

  it.each(['postgres', 'rabbitmq'] as const)(
    '/health/ready answers 503 naming %s while it is unreachable, and 200 once it is back',
    (down) => expectReadinessFollowsOutage(stack.url, dependencies.proxies[down], down, CHECKS),
  );

  it('Redis unreachable: failing closed, not ready and API requests 503; failing open, ready (Redis reported unreachable) and serving; both counted', async () => {
    openGateway = await startGateway(
      { ...stack.gatewayConfig(), RATE_LIMIT_FAIL_MODE: 'open' },
      createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
    const open = openGateway.url;
    const { apiKey } = await stack.createAccount('business');
    await expectReady(open, CHECKS);
    await dependencies.proxies.redis.cut();
    try {
      await expectNotReady(stack.url, 'redis', ['postgres', 'rabbitmq']);
      const openReady = await eventually(async () => {
        const body = await readinessAnswering(open, 200);
        expect(body.info.redis).toEqual({
          status: 'up',
          reachable: false,
          required: false,
          message: expect.any(String),
        });
        return body;
      });
      expect(openReady.status).toBe('ok');

      const before = { closed: await scrape(), open: await scrape(open) };
      expect((await stack.api(apiKey).get('/v1/conversations')).status).toBe(503);
      expect((await new ApiClient(open, apiKey).get('/v1/conversations')).status).toBe(200);
      const after = { closed: await scrape(), open: await scrape(open) };
      expect({
        closed: after.closed.since(before.closed, 'cms_rate_limiter_errors_total', { fail_mode: 'closed' }),
        open: after.open.since(before.open, 'cms_rate_limiter_errors_total', { fail_mode: 'open' }),
      }).toEqual({ closed: 1, open: 1 });
    } finally {
      await dependencies.proxies.redis.restore();
    }
    await expectReady(stack.url, CHECKS);
    await expectReady(open, CHECKS);
  });

  it('from SIGTERM on (the drain), readiness says shutdown while requests are still served, each closing its connection', async () => {
    const draining = await startGateway(
      { ...stack.gatewayConfig(), SHUTDOWN_DRAIN_MS: 2000 },
      createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent'),
    );
    const { apiKey } = await stack.createAccount('business');
    await expectReady(draining.url, CHECKS);
    const closed = draining.close();
    try {
      await expectNotReady(draining.url, 'shutdown', ['postgres', 'rabbitmq', 'redis']);
      const served = await new ApiClient(draining.url, apiKey).get('/v1/conversations');
      expect(served.status).toBe(200);
      expect(served.headers.get('connection')).toBe('close');
    } finally {
      await closed;
    }
  });
});
