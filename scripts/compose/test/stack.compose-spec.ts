import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { load } from 'js-yaml';
import { Webhook } from 'standardwebhooks';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';
import { ERROR_CATALOGUE } from '@app/errors';
import {
  ApiClient,
  ApiResponse,
  eventually,
  type RequestOptions,
  PrometheusText,
  ScenarioWorkload,
  sleep,
} from '@app/testing';
import { AppService, ComposeProject, docker, ROOT } from './compose-project';
import { EventQueue } from './event-queue';
import { ReceivedWebhook, ReceiverContainer } from './receiver-container';

/**
 * docker-compose.yml run for real, as docs/scaling.md tells users to run it: built and
 * started with `docker compose up --build -d --wait`, an account created with the CLI inside a
 * container, every operation driven through the nginx proxy on 127.0.0.1:3000 in all three
 * dialects, a webhook delivered to a receiver container on the project's network and the events
 * read from a queue bound to `conversations.events`; then scaled to two gateways, three
 * conversations and two webhooks replicas under a bounded load (everything applied, published and
 * delivered once), and one replica of each stopped or killed under load (nothing acknowledged lost).
 * Run by `npm run test:compose` (scripts/compose/run.sh), never by `npm test`.
 */

const project = new ComposeProject(process.env.COMPOSE_PROJECT_NAME ?? 'cms-compose-test');
const API = 'http://127.0.0.1:3000';
const IMAGE = 'conversation-messaging-service:local';
const SCALE: Record<AppService, number> = { gateway: 2, conversations: 3, webhooks: 2 };
const WORKERS = 6;
const UP_TIMEOUT_MS = 12 * 60_000;
const MINUTE = 60_000;
/**
 * The answers a scaled stack gives only for want of CPU (a gateway shedding, a command past its
 * deadline and its retry finding the key in use, a database connection not made in time), as
 * ScenarioWorkload.retried names them.
 */
const LOAD_RETRIES = (
  ['overloaded', 'upstream_timeout', 'idempotency_key_in_use', 'database_unavailable'] as const
).map((code) => `${ERROR_CATALOGUE[code].status} ${code}`);
/** The host ports docker-compose.yml publishes (the monitoring profile's included), by service. */
function publishedPorts(): Array<[number, string]> {
  const file = load(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { ports?: string[] }>;
  };
  return Object.entries(file.services).flatMap(([service, { ports = [] }]) =>
    // '127.0.0.1:9090:9090' or '3000:3000': the host port is the one before the container's.
    ports.map((mapping): [number, string] => [Number(mapping.split(':').at(-2)), service]),
  );
}

const isPublic = (type: string) => (PUBLIC_EVENT_TYPES as readonly string[]).includes(type);
const log = (text: string) => process.stderr.write(`compose test: ${text}\n`);

/** Every operation of the gateway's OpenAPI document, and the ones this run has exercised. */
class OperationCoverage {
  private readonly operations: Array<{ key: string; pattern: RegExp }> = [];
  private readonly seen = new Set<string>();

  async load(api: ApiClient): Promise<void> {
    const document = (await api.get('/openapi.json')).body;
    for (const [template, methods] of Object.entries<Record<string, unknown>>(document.paths)) {
      // Templates may be written percent-encoded (wiadomo%C5%9Bci); requests are compared decoded.
      const pattern = new RegExp(`^${decodeURIComponent(template).replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of Object.keys(methods))
        this.operations.push({ key: `${method.toUpperCase()} ${template}`, pattern });
    }
  }

  record(method: string, url: string): void {
    const pathname = decodeURIComponent(new URL(url, API).pathname);
    const operation = this.operations.find(
      ({ key, pattern }) => key.startsWith(`${method} `) && pattern.test(pathname),
    );
    if (operation) this.seen.add(operation.key);
  }

  missing(): string[] {
    return this.operations.map(({ key }) => key).filter((key) => !this.seen.has(key));
  }
}

/**
 * A client that does what docs/api-conventions.md asks of one: a request answered 503 or 504 (no
 * definite outcome; a replica short of CPU on a busy host) is sent again after a pause, every
 * POST under an Idempotency-Key of its own so that it applies once (bounded). DELETE is not
 * repeated: a retry after one that was applied would be a 404.
 */
class PatientClient extends ApiClient {
  override async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers = { ...options.headers };
    if (method === 'POST') headers['idempotency-key'] ??= randomUUID();
    for (let attempt = 1; ; attempt++) {
      const response = await super.request<T>(method, path, { ...options, headers });
      if (method === 'DELETE' || ![503, 504].includes(response.status) || attempt === 30) return response;
      log(`${method} ${path} answered ${response.status}; retrying`);
      await sleep(1000);
    }
  }
}

/** A PatientClient that also records which documented operation each request exercised. */
class CoveredClient extends PatientClient {
  constructor(
    baseUrl: string,
    apiKey: string,
    private readonly coverage: OperationCoverage,
  ) {
    super(baseUrl, apiKey);
  }

  override async request<T = any>(method: string, path: string, options = {}): Promise<ApiResponse<T>> {
    const response = await super.request<T>(method, path, options);
    this.coverage.record(method, path);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    return response;
  }
}

function expectStatus(response: ApiResponse, status: number): void {
  expect({ status: response.status, body: response.status === status ? 'ok' : response.text }).toEqual({
    status,
    body: 'ok',
  });
}

const language = (tag: string) => ({ headers: { 'accept-language': tag } });

/**
 * The documented way (docs/scaling.md) to run the CLI. Without --no-deps, `run` brings the services the gateway
 * depends on back to one replica each, stopping the others of a scaled stack.
 */
const CLI = ['run', '--rm', '--no-deps', 'gateway', 'node', 'dist/scripts/cli.js'];

/** The CLI in a one-off container of the gateway service; its JSON line, parsed. */
async function cli(...args: string[]): Promise<any> {
  const { stdout } = await project.compose([...CLI, ...args]);
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

function verified(secret: string, received: ReceivedWebhook): any {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': received.headers['webhook-id'],
    'webhook-timestamp': received.headers['webhook-timestamp'],
    'webhook-signature': received.headers['webhook-signature'],
  });
}

/**
 * The ids a stream resumed after `lastEventId` sends, once `count` of them came (bounded): opened
 * with the API key and Last-Event-ID, or as a browser does, with a stream token and last_event_id.
 */
async function streamedAfter(
  auth: { apiKey: string } | { token: string },
  lastEventId: string,
  count: number,
): Promise<string[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), MINUTE);
  try {
    const query = new URLSearchParams(
      'token' in auth ? { token: auth.token, last_event_id: lastEventId } : {},
    );
    const headers: Record<string, string> =
      'apiKey' in auth ? { authorization: `Bearer ${auth.apiKey}`, 'last-event-id': lastEventId } : {};
    const response = await fetch(`${API}/v1/events/stream?${query.toString()}`, {
      headers,
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    for (;;) {
      const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]);
      if (ids.length >= count) return ids;
      const { value, done } = await reader.read();
      if (done) return ids;
      text += Buffer.from(value).toString('utf8');
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

describe('docker compose: the stack users deploy', () => {
  let receiver: ReceiverContainer;
  let queue: EventQueue;
  /** The account the documented CLI command created, used by the walk through every operation. */
  let walkAccount: { accountId: string; apiKey: string };

  beforeAll(async () => {
    await project.down();
    for (const [port, service] of publishedPorts())
      if (await portInUse(port))
        throw new Error(
          `127.0.0.1:${port} is in use: the compose file publishes ${service}'s port there; stop what listens`,
        );
    const started = Date.now();
    await project.compose(['up', '--build', '-d', '--wait'], UP_TIMEOUT_MS);
    log(`docker compose up --build -d --wait: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    receiver = await ReceiverContainer.start(project.network, IMAGE);
    queue = await EventQueue.bind('compose-test.events');
  }, UP_TIMEOUT_MS + MINUTE);

  afterAll(async () => {
    const logs = await project.compose(['logs', '--no-color', '--timestamps']).catch((error) => error);
    const file = path.join(os.tmpdir(), `${project.name}-logs.txt`);
    writeFileSync(file, logs.stdout ?? String(logs));
    log(`container logs: ${file}`);
    await receiver?.remove();
    await project.down();
  }, 4 * MINUTE);

  /** The events an account caused, as they arrived on the bound queue (all of them, in time). */
  async function queuedEvents(accountId: string, count: number, timeoutMs = MINUTE) {
    return eventually(
      async () => {
        await queue.read();
        const found = queue.forAccount(accountId);
        if (found.length < count)
          throw new Error(`expected ${count} events for ${accountId}, got ${found.length}`);
        return found;
      },
      timeoutMs,
      500,
    );
  }

  /** The account's outbox once every row has been published: event id and type per row. */
  async function publishedOutbox(accountId: string): Promise<Array<{ id: string; type: string }>> {
    return eventually(
      async () => {
        const rows = await project.sql(
          `SELECT event_id, type, published_at IS NOT NULL FROM conversations.outbox WHERE account_id = '${accountId}'`,
        );
        if (!rows.every(([, , published]) => published === 't')) throw new Error('outbox not yet published');
        return rows.map(([id, type]) => ({ id, type }));
      },
      2 * MINUTE,
      500,
    );
  }

  it('is valid for Compose, and every container is healthy; the image is lean and runs as non-root under tini', async () => {
    await project.compose(['config', '--quiet']);
    const health = await project.health();
    expect(Object.keys(health).sort()).toEqual(
      ['conversations', 'gateway', 'postgres', 'proxy', 'rabbitmq', 'redis', 'webhooks'].map(
        (service) => `${project.name}-${service}-1`,
      ),
    );
    expect(new Set(Object.values(health))).toEqual(new Set(['healthy']));

    const [gateway] = await project.containers('gateway');
    expect((await docker(['exec', gateway, 'id', '-u'])).stdout.trim()).toBe('1000');
    const init = await docker(['exec', gateway, 'sh', '-c', 'tr "\\0" " " </proc/1/cmdline']);
    expect(init.stdout).toMatch(/^\/usr\/bin\/tini -- /);
    const modules = await docker(['exec', gateway, 'ls', 'node_modules', 'node_modules/.bin']);
    for (const devOnly of ['typescript', 'jest', 'prettier', '@swc', 'tsc'])
      expect(modules.stdout.split(/\s+/)).not.toContain(devOnly);
  });

  it('creates an account with the CLI inside a container, exactly as docs/scaling.md shows', async () => {
    const command = `docker compose ${CLI.join(' ')} accounts:create --name Acme --plan trial`;
    expect(readFileSync(path.join(ROOT, 'docs/scaling.md'), 'utf8')).toContain(command);
    const account = await cli('accounts:create', '--name', 'Acme', '--plan', 'trial');
    expect(account).toEqual({
      accountId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      keyId: expect.any(String),
      apiKey: expect.stringMatching(/^cms_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/),
    });
    const response = await new PatientClient(API, account.apiKey).get('/v1/conversations');
    expectStatus(response, 200);
    // The plan the CLI gave it, counted in Redis.
    expect(response.headers.get('ratelimit-policy')).toBe('"hourly";q=100;w=3600');
    walkAccount = account;
  });

  it(
    'serves every operation through the proxy in en, ms and pl; a webhook reaches the receiver container and the events the bound queue',
    async () => {
      const coverage = new OperationCoverage();
      const api = new CoveredClient(API, walkAccount.apiKey, coverage);
      await coverage.load(api);

      // Subscriptions first, so that they see every event.
      const everything = await api.post('/v1/webhooks', {
        url: receiver.url('/hooks/walk'),
        events: ['*'],
        dialect: 'pl',
        description: 'compose walk',
      });
      expectStatus(everything, 201);
      expect(everything.body).toMatchObject({ events: ['*'], dialect: 'pl', status: 'enabled' });
      const malay = await api.post('/v1/webhooks', {
        url: receiver.url('/hooks/malay'),
        events: ['perbualan.dimulakan', 'memimpin.ditawan'],
        dialect: 'ms',
      });
      expectStatus(malay, 201);
      expect(malay.body.events).toEqual(['conversation.started', 'lead.captured']);

      // Create: English with an Idempotency-Key (replayed), Malay status value, Polish path and value.
      const first = {
        subject: 'Order 1001',
        visitor: { name: 'Ada', email: 'ada@example.com' },
        message: { sender: 'visitor', content: 'Hi!' },
      };
      const key = { headers: { 'idempotency-key': 'order-1001-chat' } };
      const created = await api.post('/v1/conversations', first, key);
      expectStatus(created, 201);
      expect(created.body).toMatchObject({ status: 'active', subject: 'Order 1001', message_count: 1 });
      const replayed = await api.post('/v1/conversations', first, key);
      expect({ status: replayed.status, replayed: replayed.headers.get('idempotent-replayed') }).toEqual({
        status: 201,
        replayed: 'true',
      });
      expect(replayed.body).toEqual(created.body);
      const id = created.body.id;
      const pendingMs = await api.post('/v1/conversations', { status: 'belum selesai' }, language('ms'));
      expectStatus(pendingMs, 201);
      expect(pendingMs.body.status).toBe('belum selesai');
      const pendingPl = await api.post('/v1/rozmowy', { status: 'w toku' });
      expectStatus(pendingPl, 201);
      expect(pendingPl.body.status).toBe('w toku');

      // List in each dialect's parameter names and values.
      const en = await api.get('/v1/conversations?limit=10&offset=0&status=active');
      expectStatus(en, 200);
      expect(en.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
      const ms = await api.get(
        '/v1/conversations?had=10&mengimbangi=0&status=belum%20selesai',
        language('ms'),
      );
      expectStatus(ms, 200);
      expect(ms.body.data.map((c: { status: string }) => c.status)).toEqual([
        'belum selesai',
        'belum selesai',
      ]);
      const pl = await api.get(`/v1/rozmowy?limit=10&${encodeURIComponent('przesunięcie')}=0&stan=aktywne`);
      expectStatus(pl, 200);
      expect(pl.body).toMatchObject({ data: [{ id, status: 'aktywne' }], pagination: { total: 1 } });

      // Get one, in English and (by its path) in Polish.
      const read = await api.get(`/v1/conversations/${id}`);
      expectStatus(read, 200);
      expect(read.body.messages.map((m: { content: string }) => m.content)).toEqual(['Hi!']);
      expect((await api.get(`/v1/rozmowy/${id}`)).body.status).toBe('aktywne');

      // Send a message on every spelling of the path; fetch percent-encodes wiadomości as clients do.
      const sends: Array<[string, string]> = [
        [`/v1/conversations/${id}/messages`, 'agent'],
        [`/v1/rozmowy/${id}/wiadomości`, 'visitor'],
        [`/v1/rozmowy/${id}/wiadomo%C5%9Bci`, 'bot'],
        [`/v1/conversations/${id}/wiadomości`, 'system'],
        [`/v1/rozmowy/${id}/messages`, 'agent'],
      ];
      for (const [at, sender] of sends) {
        const sent = await api.post(at, { sender, content: `via ${at}` });
        expectStatus(sent, 201);
        expect(sent.body).toMatchObject({ conversation_id: id, sender, content: `via ${at}` });
      }

      // Leads, in English and under the Polish path.
      expectStatus(
        await api.post(`/v1/conversations/${id}/lead`, { name: 'Ada', email: 'ada@example.com' }),
        201,
      );
      expectStatus(
        await api.post(`/v1/rozmowy/${pendingPl.body.id}/lead`, { phone: '+48 22 123 45 67' }),
        201,
      );

      // The captured lead, read back in English and under the Polish path.
      const lead = await api.get(`/v1/conversations/${id}/lead`);
      expectStatus(lead, 200);
      expect(lead.body).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
      expect((await api.get(`/v1/rozmowy/${pendingPl.body.id}/lead`)).body.phone).toBe('+48 22 123 45 67');

      // The messages, paged: oldest first, then newest first under the Polish path.
      const firstPage = await api.get(`/v1/conversations/${id}/messages?limit=2`);
      expectStatus(firstPage, 200);
      expect(firstPage.body.data.map((m: { content: string }) => m.content)).toEqual([
        'Hi!',
        `via ${sends[0][0]}`,
      ]);
      const secondPage = await api.get(
        `/v1/conversations/${id}/messages?limit=2&after=${encodeURIComponent(firstPage.body.pagination.next)}`,
      );
      expect(secondPage.body.data.map((m: { sender: string }) => m.sender)).toEqual(['visitor', 'bot']);
      const newest = await api.get(`/v1/rozmowy/${id}/wiadomości?limit=1&order=desc`);
      expectStatus(newest, 200);
      expect(newest.body.data.map((m: { content: string }) => m.content)).toEqual([`via ${sends[4][0]}`]);

      // Transitions: close, reopen with a Malay value (answered in Malay), close with a Polish one.
      const closed = await api.patch(`/v1/conversations/${id}`, { status: 'closed' });
      expectStatus(closed, 200);
      expect(closed.body).toMatchObject({ status: 'closed', closed_at: expect.any(String) });
      const reopened = await api.patch(`/v1/conversations/${id}`, { status: 'aktif' }, language('ms'));
      expect(reopened.body).toMatchObject({ status: 'aktif', closed_at: null });
      const closedPl = await api.patch(`/v1/rozmowy/${id}`, { status: 'zamknięte' });
      expect(closedPl.body.status).toBe('zamknięte');
      expect(
        (await api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'x' })).body.code,
      ).toBe('conversation_closed');

      // Analytics over the last hour.
      const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
      const summary = await api.get(`/v1/analytics/summary?${range}`);
      expectStatus(summary, 200);
      expect(summary.body).toMatchObject({ conversations: { started: 3, closed: 2 }, leads_captured: 2 });
      const series = await api.get(
        `/v1/analytics/timeseries?${range}&metric=messages_received&interval=hour`,
      );
      expectStatus(series, 200);

      // The broker: every event of the account once, as CloudEvents on persistent messages.
      const outbox = await publishedOutbox(walkAccount.accountId);
      const queued = await queuedEvents(walkAccount.accountId, outbox.length);
      expect(queued.map(({ event }) => event.id).sort()).toEqual(outbox.map((row) => row.id).sort());
      for (const { routingKey, persistent, event } of queued) {
        expect({ routingKey, persistent, specversion: event.specversion }).toEqual({
          routingKey: event.type,
          persistent: true,
          specversion: '1.0',
        });
      }
      expect(await queue.exchange()).toMatchObject({ type: 'topic', durable: true });

      // The events API: the same events, newest first, one by id, and the stream resumed after the
      // oldest replaying all the others (through whichever gateway replica nginx picks).
      const events = await api.get('/v1/events?limit=100');
      expectStatus(events, 200);
      const eventIds = events.body.data.map((e: { id: string }) => e.id);
      expect([...eventIds].sort()).toEqual(outbox.map((row) => row.id).sort());
      const oldest = eventIds[eventIds.length - 1];
      const one = await api.get(`/v1/events/${oldest}`, language('pl'));
      expectStatus(one, 200);
      expect(one.body).toMatchObject({ id: oldest, type: 'rozmowa.rozpoczęta', sequence: 1 });
      const streamed = await streamedAfter(walkAccount, oldest, eventIds.length - 1);
      coverage.record('GET', '/v1/events/stream');
      expect([...streamed].sort()).toEqual(eventIds.slice(0, -1).sort());
      // A browser's way in: a stream token, then the stream with no header, resumed the same way.
      const streamToken = await api.post('/v1/events/stream-tokens');
      expectStatus(streamToken, 201);
      expect(streamToken.body.token).toMatch(/^st_/);
      expect(await streamedAfter(streamToken.body, oldest, eventIds.length - 1)).toEqual(streamed);

      // The receiver container got each public event once, signed, typed in the subscription's dialect.
      const publicEvents = queued.filter(({ event }) => isPublic(event.type));
      const delivered = await receiver.waitFor('/hooks/walk', publicEvents.length);
      expect(delivered.map((r) => r.headers['webhook-id']).sort()).toEqual(
        publicEvents.map((q) => q.event.id).sort(),
      );
      const types = delivered.map((received) => verified(everything.body.secret, received).type);
      expect(types).toContain('rozmowa.rozpoczęta');
      expect(types).toContain('wiadomość.odebrana');
      const malayTypes = (await receiver.waitFor('/hooks/malay', 5)).map(
        (r) => verified(malay.body.secret, r).type,
      );
      expect(malayTypes.sort()).toEqual(
        [...Array(3).fill('perbualan.dimulakan'), ...Array(2).fill('memimpin.ditawan')].sort(),
      );

      // Every webhook operation: read, list (events rendered in Polish), update, test, deliveries, retry, rotate, delete.
      const hook = `/v1/webhooks/${everything.body.id}`;
      expectStatus(await api.get(hook), 200);
      const listed = await api.get('/v1/webhooks', language('pl'));
      expect(listed.body.data.find((w: { id: string }) => w.id === malay.body.id).events).toEqual([
        'rozmowa.rozpoczęta',
        'lead.captured',
      ]);
      const updated = await api.patch(hook, { description: 'compose walk, renamed' });
      expect(updated.body.description).toBe('compose walk, renamed');
      expectStatus(await api.post(`${hook}/test`), 202);
      const [test] = await eventually(async () => {
        const found = (await receiver.received('/hooks/walk')).filter(
          (r) => JSON.parse(r.body).type === 'webhook.test',
        );
        expect(found).toHaveLength(1);
        return found;
      }, MINUTE);
      expect(verified(everything.body.secret, test).type).toBe('webhook.test');
      const deliveries = await api.get(`${hook}/deliveries`);
      expectStatus(deliveries, 200);
      const succeeded = deliveries.body.data.find((d: { status: string }) => d.status === 'succeeded');
      expectStatus(await api.get(`${hook}/deliveries/${succeeded.id}`), 200);
      expectStatus(await api.post(`${hook}/deliveries/${succeeded.id}/retry`), 202);
      // Replay of the last hour: every public event delivered again, under its own webhook-id.
      const replay = await api.post(`${hook}/replay`, {
        since: new Date(Date.now() - 3_600_000).toISOString(),
      });
      expectStatus(replay, 202);
      expect(replay.body).toEqual({ events: publicEvents.length });
      await eventually(async () => {
        const ids = (await receiver.received('/hooks/walk')).map((r) => r.headers['webhook-id']);
        for (const { event } of publicEvents)
          expect({ id: event.id, twice: ids.filter((id) => id === event.id).length >= 2 }).toEqual({
            id: event.id,
            twice: true,
          });
        return true;
      }, MINUTE);
      const rotated = await api.post(`${hook}/secret/rotate`);
      expectStatus(rotated, 200);
      expect(rotated.body.secret).not.toBe(everything.body.secret);
      expectStatus(await api.request('DELETE', `/v1/webhooks/${malay.body.id}`), 204);

      // Erasure, in both path spellings: the conversation is gone from every read.
      for (const collection of ['/v1/conversations', '/v1/rozmowy']) {
        const doomed = await api.post(collection, {});
        expectStatus(doomed, 201);
        expectStatus(await api.request('DELETE', `${collection}/${doomed.body.id}`), 204);
        expectStatus(await api.get(`${collection}/${doomed.body.id}`), 404);
      }

      expect(coverage.missing()).toEqual([]);
    },
    5 * MINUTE,
  );

  /** A business account with a subscription to every event on the receiver at `/hooks/<name>`. */
  async function subscribedAccount(name: string) {
    const account = await cli('accounts:create', '--name', name, '--plan', 'business');
    const api = new PatientClient(API, account.apiKey);
    const hook = await api.post('/v1/webhooks', { url: receiver.url(`/hooks/${name}`), events: ['*'] });
    expectStatus(hook, 201);
    return { ...account, api, hookPath: `/hooks/${name}` } as {
      accountId: string;
      apiKey: string;
      api: ApiClient;
      hookPath: string;
    };
  }

  /** Every counted event of the workload is in the outbox, published, on the queue and delivered. */
  async function expectEventsOf(
    workload: ScenarioWorkload,
    account: { accountId: string; hookPath: string },
    exactlyOnce: boolean,
  ): Promise<void> {
    const outbox = await publishedOutbox(account.accountId);
    const byType: Record<string, number> = {};
    for (const row of outbox) byType[row.type] = (byType[row.type] ?? 0) + 1;
    expect(byType).toEqual(workload.events);
    const outboxIds = outbox.map((row) => row.id).sort();

    const queued = await queuedEvents(account.accountId, outbox.length);
    const queuedIds = queued.map(({ event }) => event.id);
    expect([...new Set(queuedIds)].sort()).toEqual(outboxIds);
    if (exactlyOnce) expect(queuedIds).toHaveLength(outboxIds.length);

    const publicIds = outbox.filter((row) => isPublic(row.type)).map((row) => row.id);
    const delivered = await eventually(
      async () => {
        const ids = (await receiver.received(account.hookPath)).map((r) => r.headers['webhook-id']);
        expect([...new Set(ids)].sort()).toEqual(publicIds.sort());
        return ids;
      },
      2 * MINUTE,
      1000,
    );
    if (exactlyOnce) {
      // A duplicate would come from a lapsed claim: give one a moment to show before counting.
      await sleep(5000);
      expect((await receiver.received(account.hookPath)).length).toBe(delivered.length);
      expect(delivered).toHaveLength(publicIds.length);
    }
  }

  it(
    'scales to 2 gateways, 3 conversations and 2 webhooks replicas, each scraped by the monitoring profile’s Prometheus; a bounded load is applied, published and delivered once',
    async () => {
      const scale = Object.entries(SCALE).flatMap(([service, count]) => ['--scale', `${service}=${count}`]);
      await project.compose(
        ['--profile', 'monitoring', 'up', '--build', '-d', '--wait', ...scale],
        UP_TIMEOUT_MS,
      );
      for (const [service, count] of Object.entries(SCALE))
        expect({ service, replicas: (await project.containers(service)).length }).toEqual({
          service,
          replicas: count,
        });
      // The monitoring profile's Prometheus found every replica through Docker's DNS, scrapes each
      // one successfully, and has the alert rules loaded.
      const scraped = await eventually(
        async () => {
          const up = await project.prometheusTargetsUp();
          expect(up).toEqual(SCALE);
          return up;
        },
        2 * MINUTE,
        1000,
      );
      log(`prometheus: every replica up ${JSON.stringify(scraped)}`);
      expect(await project.prometheusAlertNames()).toEqual(
        expect.arrayContaining(['OutboxStalled', 'ServiceDown']),
      );

      const account = await subscribedAccount('scaled');
      const workload = new ScenarioWorkload([API], account.apiKey, 'scaled', WORKERS);
      await workload.run(6);
      // Nothing cut off, and no answer but the ones a busy machine explains (LOAD_RETRIES) asked
      // for a retry. Each was retried under its key, so the checks below hold.
      log(`scaled: retried answers ${JSON.stringify(workload.retried)}`);
      const unexplained = Object.keys(workload.retried).filter((reason) => !LOAD_RETRIES.includes(reason));
      expect({ resets: workload.resets, unexplained }).toEqual({ resets: [], unexplained: [] });
      await workload.expectApplied(account.api);
      await expectEventsOf(workload, account, true);

      // The proxy spread requests over both gateways; RabbitMQ spread commands and events over the replicas.
      const served: Record<AppService, [string, Record<string, string>]> = {
        gateway: ['cms_http_requests_total', {}],
        conversations: ['cms_rpc_server_commands_total', { outcome: 'ok' }],
        webhooks: ['cms_webhook_events_consumed_total', { outcome: 'fanned_out' }],
      };
      for (const [service, [metric, labels]] of Object.entries(served) as Array<
        [AppService, [string, any]]
      >) {
        for (const container of await project.containers(service)) {
          const value =
            new PrometheusText(await project.metrics(container, service)).value(metric, labels) ?? 0;
          expect({ container, served: value > 0 }).toEqual({ container, served: true });
        }
      }
    },
    15 * MINUTE,
  );

  it(
    'under load, one replica of each service stopped (gateway) or killed (conversations, webhooks): nothing acknowledged is lost, the rest keeps serving',
    async () => {
      const account = await subscribedAccount('faults');
      // Still scaled: creating the account with the CLI stopped no replica.
      for (const [service, count] of Object.entries(SCALE))
        expect({ service, replicas: (await project.containers(service)).length }).toEqual({
          service,
          replicas: count,
        });
      const workload = new ScenarioWorkload([API], account.apiKey, 'faults', WORKERS);
      const load = workload.run(40);
      try {
        await eventually(() => workload.completed >= 2 * WORKERS, 2 * MINUTE, 200);
        const [gateways, conversations, webhooks] = await Promise.all(
          (['gateway', 'conversations', 'webhooks'] as const).map((service) => project.containers(service)),
        );
        const victims = [gateways.at(-1)!, conversations.at(-1)!, webhooks.at(-1)!];
        log(
          `stopping ${victims[0]}, killing ${victims[1]} and ${victims[2]} at ${workload.completed} scenarios`,
        );
        await Promise.all([
          docker(['stop', victims[0]]),
          docker(['kill', victims[1]]),
          docker(['kill', victims[2]]),
        ]);
        // SIGTERM reached Node through tini, and the gateway finished gracefully.
        const exitCode = (await docker(['inspect', '-f', '{{.State.ExitCode}}', victims[0]])).stdout.trim();
        expect({ stopped: victims[0], exitCode }).toEqual({ stopped: victims[0], exitCode: '0' });
        const before = workload.completed;
        await eventually(() => workload.completed >= before + 2 * WORKERS, 3 * MINUTE, 200);
      } finally {
        workload.stop();
        await load;
      }
      log(`faults: ${workload.completed} scenarios, retried answers ${JSON.stringify(workload.retried)}`);
      expect(workload.lostResponses).toEqual([]);
      await workload.expectApplied(account.api);
      await expectEventsOf(workload, account, false);
      // The survivors are healthy and serve: a gateway answers through the proxy.
      expectStatus(await account.api.get('/v1/conversations?limit=1'), 200);
    },
    10 * MINUTE,
  );
});
