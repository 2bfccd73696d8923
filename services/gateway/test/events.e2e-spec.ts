import { readFileSync } from 'node:fs';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import {
  capturedLogger,
  eventually,
  expectProblem,
  rabbitmqctl,
  PrometheusText,
  rabbitmqList,
  runCliCommand,
  ServiceProcess,
  TestAccount,
  TestStack,
} from '@app/testing';
import { startGateway, type RunningGateway } from '../src/gateway-service';
import { SLOT_TTL_MS } from '../src/events/stream-slots';
import { createLogger } from '@app/observability';
import { SseClient, type StreamedEvent } from './support/sse-client';

/**
 * The events API and the live stream (docs/events.md): every
 * event of the account newest first with filters and cursors, one by id, and
 * `GET /v1/events/stream` through a real EventSource client: dialect names, tenant isolation,
 * resume with Last-Event-ID in the middle of a burst (no gap, no duplicate), heartbeats, the
 * per-account limit across two gateway processes, and latency from commit to client.
 */

interface EventBody {
  id: string;
  type: string;
  created_at: string;
  conversation_id: string;
  sequence: number;
  data: Record<string, any>;
}

const HEARTBEAT_MS = 300;
/** The default of STREAMS_PER_ACCOUNT. */
const STREAMS_PER_ACCOUNT = 5;

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];

describe('events API and stream', () => {
  let stack: TestStack;
  let account: TestAccount;
  let other: TestAccount;
  const clients: SseClient[] = [];
  const stream = (base: string, key: string, options?: ConstructorParameters<typeof SseClient>[2]) => {
    const client = new SseClient(base, key, options);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    stack = await TestStack.start({ gateway: { STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    [account, other] = [await stack.createAccount(), await stack.createAccount()];
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
  });

  afterAll(() => stack?.close());

  describe('GET /v1/events', () => {
    let conversationId: string;
    let closedId: string;

    beforeAll(async () => {
      const created = await account.api.post('/v1/conversations', {
        message: { sender: 'visitor', content: 'Hi' },
      });
      conversationId = created.body.id;
      await account.api.post(`/v1/conversations/${conversationId}/messages`, {
        sender: 'agent',
        content: 'Hello',
      });
      await account.api.patch(`/v1/conversations/${conversationId}`, { status: 'pending' });
      await account.api.patch(`/v1/conversations/${conversationId}`, { subject: 'Order' });
      closedId = (await account.api.post('/v1/conversations', {})).body.id;
      await account.api.patch(`/v1/conversations/${closedId}`, { status: 'closed' });
      await other.api.post('/v1/conversations', { message: { sender: 'visitor', content: 'Not yours' } });
    });

    it('lists every event of the account, newest first, numbered per conversation', async () => {
      const response = await account.api.get('/v1/events');
      expect(response.status).toBe(200);
      const events: EventBody[] = response.body.data;
      expect(events.map((e) => [e.type, e.sequence, e.conversation_id])).toEqual([
        ['conversation.closed', 2, closedId],
        ['conversation.started', 1, closedId],
        ['conversation.updated', 5, conversationId],
        ['conversation.status_changed', 4, conversationId],
        ['message.sent', 3, conversationId],
        ['message.received', 2, conversationId],
        ['conversation.started', 1, conversationId],
      ]);
      expect(response.body.pagination).toEqual({ limit: 20, next: null });
      expect(events[5].data.message.content).toBe('Hi');
    });

    it('filters by type (named in any dialect), conversation and time; pages with an opaque cursor', async () => {
      const received = await account.api.get('/v1/events?type=wiadomo%C5%9B%C4%87.odebrana');
      expect(received.body.data.map((e: EventBody) => e.type)).toEqual(['message.received']);
      const byConversation = await account.api.get(`/v1/events?conversation_id=${closedId}`);
      expect(byConversation.body.data.map((e: EventBody) => e.type)).toEqual([
        'conversation.closed',
        'conversation.started',
      ]);
      const all: EventBody[] = (await account.api.get('/v1/events')).body.data;
      const between = await account.api.get(
        `/v1/events?created_after=${all[6].created_at}&created_before=${all[0].created_at}`,
      );
      expect(between.body.data.map((e: EventBody) => e.id)).toEqual(
        all
          .filter((e) => e.created_at > all[6].created_at && e.created_at < all[0].created_at)
          .map((e) => e.id),
      );
      const paged: string[] = [];
      let after: string | null = null;
      do {
        const suffix: string = after ? `&after=${encodeURIComponent(after)}` : '';
        const page = await account.api.get(`/v1/events?had=3${suffix}`);
        expect(page.status).toBe(200);
        paged.push(...page.body.data.map((e: EventBody) => e.id));
        after = page.body.pagination.next;
      } while (after !== null);
      expect(paged).toEqual(all.map((e) => e.id));
    });

    it('renders types and statuses in the output dialect', async () => {
      const response = await account.api.get(`/v1/events?conversation_id=${closedId}`, {
        headers: { 'accept-language': 'ms' },
      });
      expect(response.body.data.map((e: EventBody) => e.type)).toEqual([
        'perbualan.tertutup',
        'perbualan.dimulakan',
      ]);
      expect(response.body.data[0].data.conversation.status).toBe('ditutup');
      const pl = await account.api.get('/v1/events?type=conversation.status_changed', {
        headers: { 'accept-language': 'pl' },
      });
      expect(pl.body.data[0]).toMatchObject({
        type: 'rozmowa.stan_zmieniony',
        data: { previous_status: 'aktywne', conversation: { status: 'w toku' } },
      });
    });

    it("gets one event by id; another account's or an unknown one is a 404", async () => {
      const [latest] = (await account.api.get('/v1/events')).body.data as EventBody[];
      const one = await account.api.get(`/v1/events/${latest.id}`);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(latest);
      expectProblem(
        await other.api.get(`/v1/events/${latest.id}`),
        404,
        'not_found',
        `/v1/events/${latest.id}`,
      );
      expectProblem(
        await account.api.get('/v1/events/not-a-uuid'),
        404,
        'not_found',
        '/v1/events/not-a-uuid',
      );
    });

    it('seals its cursor: opaque, counting nothing, and a 400 in another account, changed, or from 1.0.0', async () => {
      const page = await account.api.get('/v1/events?limit=2');
      const cursor: string = page.body.pagination.next;
      const [, last] = page.body.data as EventBody[];
      const shown = Buffer.from(cursor, 'base64url').toString('latin1');
      expect(shown).not.toContain(last.created_at.slice(0, 10));
      expect(shown).not.toMatch(/^e1\./);
      expect(cursor).not.toBe((await account.api.get('/v1/events?limit=2')).body.pagination.next);
      const next = await account.api.get(`/v1/events?limit=2&after=${cursor}`);
      expect(next.status).toBe(200);

      const refusal = async (api: typeof account.api, after: string) => {
        const response = await api.get(`/v1/events?limit=2&after=${encodeURIComponent(after)}`);
        return { status: response.status, errors: response.body.errors };
      };
      const foreign = {
        status: 400,
        errors: [
          { field: 'after', message: 'must be a pagination.next cursor of this endpoint, for this account' },
        ],
      };
      expect(await refusal(other.api, cursor)).toEqual(foreign);
      const bytes = Buffer.from(cursor, 'base64url');
      for (const at of [0, 5, bytes.length - 1]) {
        const tampered = Buffer.from(bytes);
        tampered[at] ^= 0x01;
        expect(await refusal(account.api, tampered.toString('base64url'))).toEqual(foreign);
      }
      // What 1.0.0 handed out: the time and the outbox id of the last event, in plain base64url.
      const unsealed = Buffer.from(`e1.${last.created_at}.1`).toString('base64url');
      expect(await refusal(account.api, unsealed)).toEqual({
        status: 400,
        errors: [
          {
            field: 'after',
            message:
              'is a cursor of an earlier version of the API, no longer accepted; read again from the first page',
          },
        ],
      });
    });

    it('refuses unknown parameters, unknown types, bad cursors and bad times with a 400 naming them', async () => {
      for (const [query, field] of [
        ['colour=blue', 'colour'],
        ['type=conversation.removed', 'type'],
        ['after=bm9wZQ', 'after'],
        ['created_after=yesterday', 'created_after'],
        ['limit=101', 'limit'],
        ['conversation_id=42', 'conversation_id'],
      ]) {
        const response = await account.api.get(`/v1/events?${query}`);
        expect({ query, status: response.status, code: response.body.code }).toEqual({
          query,
          status: 400,
          code: 'validation_failed',
        });
        expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
    });
  });

  describe('GET /v1/events/stream', () => {
    it('delivers live events with the type in the output dialect, and none of another account', async () => {
      const mine = await stream(stack.url, account.apiKey, { language: 'pl' }).open();
      const theirs = await stream(stack.url, other.apiKey).open();
      const created = await account.api.post('/v1/conversations', {
        message: { sender: 'visitor', content: 'Hej' },
      });
      await eventually(() => mine.events.length >= 2);
      expect(mine.events.map((e) => [e.event, e.data.type, e.data.sequence])).toEqual([
        ['rozmowa.rozpoczęta', 'rozmowa.rozpoczęta', 1],
        ['wiadomość.odebrana', 'wiadomość.odebrana', 2],
      ]);
      expect(mine.events[0].data.data.conversation.status).toBe('aktywne');
      expect(mine.events.every((e) => e.id === e.data.id && e.data.conversation_id === created.body.id)).toBe(
        true,
      );
      const stored = await account.api.get(`/v1/events/${mine.events[1].id}`, {
        headers: { 'accept-language': 'pl' },
      });
      expect(stored.body).toEqual(mine.events[1].data);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(theirs.events).toEqual([]);
    });

    it('resumes after Last-Event-ID in the middle of a burst with no gap and no duplicate', async () => {
      const { body } = await account.api.post('/v1/conversations', {});
      const first = await stream(stack.url, account.apiKey).open();
      const burst = (async () => {
        for (let i = 0; i < 80; i++) {
          await account.api.post(`/v1/conversations/${body.id}/messages`, {
            sender: 'agent',
            content: `m${i}`,
          });
        }
      })();
      await eventually(() => first.events.length >= 15);
      first.close();
      const seen = [...first.events];
      const resumed = await stream(stack.url, account.apiKey, {
        lastEventId: seen[seen.length - 1].id,
      }).open();
      await burst;
      await eventually(
        () => seen.length + resumed.events.length >= 80 && resumed.events.at(-1)?.data.sequence === 81,
        15_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      const all = [...seen, ...resumed.events].filter((e) => e.data.conversation_id === body.id);
      expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
      // conversation.started (1) may still have been on its way when the stream opened.
      const from = all[0].data.sequence;
      expect(from).toBeLessThanOrEqual(2);
      expect(all.map((e) => e.data.sequence)).toEqual(Array.from({ length: 82 - from }, (_, i) => i + from));
    });

    it('resumes by the last_event_id parameter too; an unknown or malformed id is a 400', async () => {
      const [latest] = (await account.api.get('/v1/events?limit=1')).body.data as EventBody[];
      const resumed = await stream(stack.url, account.apiKey, { query: `last_event_id=${latest.id}` }).open();
      await account.api.post('/v1/conversations', {});
      await eventually(() => resumed.events.length === 1);
      expect(resumed.events[0].data.type).toBe('conversation.started');

      const auth = { authorization: `Bearer ${account.apiKey}` };
      const unknown = await fetch(`${stack.url}/v1/events/stream`, {
        headers: { ...auth, 'last-event-id': '00000000-0000-4000-8000-000000000000' },
      });
      expect(unknown.status).toBe(400);
      expect(((await unknown.json()) as { errors: Array<{ field: string }> }).errors[0].field).toBe(
        'last_event_id',
      );
      const foreign = await fetch(`${stack.url}/v1/events/stream?last_event_id=${latest.id}`, {
        headers: { authorization: `Bearer ${other.apiKey}` },
      });
      expect(foreign.status).toBe(400);
      await foreign.body?.cancel();
      const malformed = await fetch(`${stack.url}/v1/events/stream`, {
        headers: { ...auth, 'last-event-id': 'x' },
      });
      expect(malformed.status).toBe(400);
      const unknownParameter = await fetch(`${stack.url}/v1/events/stream?since=1`, { headers: auth });
      expect(unknownParameter.status).toBe(400);
    });

    it('sends a heartbeat comment when idle', async () => {
      const response = await fetch(`${stack.url}/v1/events/stream`, {
        headers: { authorization: `Bearer ${other.apiKey}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = response.body!.getReader();
      let text = '';
      const started = Date.now();
      while ((text.match(/: heartbeat/g) ?? []).length < 2 && Date.now() - started < 5000) {
        text += new TextDecoder().decode((await reader.read()).value);
      }
      await reader.cancel();
      expect((text.match(/: heartbeat/g) ?? []).length).toBeGreaterThanOrEqual(2);
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 2 + 1000);
    });
  });

  describe('two gateway processes', () => {
    let gatewayB: ServiceProcess;
    let third: TestAccount;

    beforeAll(async () => {
      gatewayB = await ServiceProcess.start('gateway', { STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS) });
      third = await stack.createAccount();
    });

    afterAll(() => gatewayB?.stop());

    it('an event committed through gateway A reaches a stream on gateway B; latency measured', async () => {
      const onA = await stream(stack.url, third.apiKey).open();
      const onB = await stream(gatewayB.url, third.apiKey).open();
      const { body } = await third.api.post('/v1/conversations', {});
      const latencies: Record<'A' | 'B', number[]> = { A: [], B: [] };
      for (let i = 0; i < 40; i++) {
        const sent = performance.now();
        const message = await third.api.post(`/v1/conversations/${body.id}/messages`, {
          sender: 'agent',
          content: `${i}`,
        });
        const committed = performance.now();
        const arrival = (client: SseClient) =>
          eventually(() =>
            client.events.find((e: StreamedEvent) => e.data.data.message?.id === message.body.id),
          );
        const [a, b] = await Promise.all([arrival(onA), arrival(onB)]);
        latencies.A.push(a.receivedAt - committed);
        latencies.B.push(b.receivedAt - committed);
        expect(sent).toBeLessThan(committed);
      }
      const summary = Object.fromEntries(
        Object.entries(latencies).map(([gateway, values]) => [
          gateway,
          { p50: percentile(values, 50).toFixed(1), p99: percentile(values, 99).toFixed(1) },
        ]),
      );
      console.log(`commit (201 received) -> SSE event, ms: ${JSON.stringify(summary)}`);
      expect(onB.events.map((e) => e.id)).toEqual(onA.events.map((e) => e.id));
    });

    it('holds 200 open streams on one gateway process at a measured memory cost', async () => {
      const rssKb = () =>
        Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${gatewayB.child.pid}/status`, 'utf8'))![1]);
      const before = rssKb();
      const readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];
      for (let i = 0; i < 40; i++) {
        const { apiKey } = await stack.createAccount();
        for (let j = 0; j < 5; j++) {
          const response = await fetch(`${gatewayB.url}/v1/events/stream`, {
            headers: { authorization: `Bearer ${apiKey}` },
          });
          expect(response.status).toBe(200);
          readers.push(response.body!.getReader());
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      const perStreamKb = (rssKb() - before) / readers.length;
      console.log(
        `gateway RSS ${before} kB -> ${rssKb()} kB with ${readers.length} open streams: ~${perStreamKb.toFixed(1)} kB each`,
      );
      await Promise.all(readers.map((reader) => reader.cancel()));
      expect(perStreamKb).toBeLessThan(200);
    });

    it("a revoked key's streams end on both gateways at once; a plan change ends the account's", async () => {
      const { accountId, apiKey: revokedKey, keyId } = await stack.createAccount();
      const { apiKey: otherKey } = await stack.accountsRepository().createKey(accountId);
      const [revokedA, revokedB, keptA, keptB] = await Promise.all([
        stream(stack.url, revokedKey).open(),
        stream(gatewayB.url, revokedKey).open(),
        stream(stack.url, otherKey).open(),
        stream(gatewayB.url, otherKey).open(),
      ]);
      // Ended when the CLI's announcement arrives, not when the key caches expire.
      const cacheTtlMs = stack.gatewayConfig().AUTH_CACHE_TTL_MS;
      await runCliCommand('keys:revoke', '--key-id', keyId);
      await eventually(() => revokedA.closedByServer && revokedB.closedByServer, cacheTtlMs);
      for (const url of [stack.url, gatewayB.url]) {
        const again = await fetch(`${url}/v1/events/stream`, {
          headers: { authorization: `Bearer ${revokedKey}` },
        });
        expect(again.status).toBe(401);
      }
      // The account's other key streams on, and is told of new events.
      const { body } = await stack.api(otherKey).post('/v1/conversations', {});
      for (const kept of [keptA, keptB]) {
        await eventually(() => kept.events.some((e) => e.data.conversation_id === body.id));
        expect(kept.closedByServer).toBe(false);
      }
      await runCliCommand('accounts:set-plan', '--account', accountId, '--plan', 'pro');
      await eventually(() => keptA.closedByServer && keptB.closedByServer, cacheTtlMs);
      await stream(gatewayB.url, otherKey).open(); // reconnects, under the new plan
    });

    it('a key change whose announcement was missed ends its streams at the next slot renewal', async () => {
      // Changed in the database only, as when Redis was down when the CLI announced it.
      const accounts = stack.accountsRepository();
      const [revoked, narrowed, replanned, kept] = [
        await stack.createAccount(),
        await stack.createAccount(),
        await stack.createAccount('business'),
        await stack.createAccount(),
      ];
      const [revokedStream, narrowedStream, replannedStream, keptStream] = await Promise.all([
        stream(stack.url, revoked.apiKey).open(),
        stream(gatewayB.url, narrowed.apiKey).open(),
        stream(stack.url, replanned.apiKey).open(),
        stream(gatewayB.url, kept.apiKey).open(),
      ]);
      await accounts.revokeKey(revoked.keyId);
      await accounts.setScopes(narrowed.keyId, ['conversations:read']);
      await accounts.setPlan(replanned.accountId, 'pro');
      const bound = SLOT_TTL_MS / 3 + stack.gatewayConfig().AUTH_CACHE_TTL_MS + 5_000;
      await eventually(
        () => revokedStream.closedByServer && narrowedStream.closedByServer && replannedStream.closedByServer,
        bound,
      );
      // A key that is still good streams on, and is told of new events.
      const { body } = await kept.api.post('/v1/conversations', {});
      await eventually(() => keptStream.events.some((e) => e.data.conversation_id === body.id));
      expect(keptStream.closedByServer).toBe(false);
      await stream(stack.url, replanned.apiKey).open(); // reconnects, under the new plan
    }, 60_000);

    it('allows STREAMS_PER_ACCOUNT (5) streams per account across both gateways; the next is 429 too_many_streams', async () => {
      const open = await Promise.all([
        ...[0, 1, 2].map(() => stream(stack.url, third.apiKey).open()),
        ...[0, 1].map(() => stream(gatewayB.url, third.apiKey).open()),
      ]);
      for (const url of [stack.url, gatewayB.url]) {
        const refused = await fetch(`${url}/v1/events/stream`, {
          headers: { authorization: `Bearer ${third.apiKey}` },
        });
        expect(refused.status).toBe(429);
        expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(((await refused.json()) as { code: string }).code).toBe('too_many_streams');
      }
      open[4].close();
      await eventually(async () => {
        const next = new SseClient(gatewayB.url, third.apiKey);
        clients.push(next);
        return next.open().then(
          () => true,
          () => false,
        );
      });
    });
  });

  it('every stream gets its log line (duration, events sent) and its count, whoever ends it', async () => {
    const log = capturedLogger('info');
    const gateway: RunningGateway = await startGateway(stack.gatewayConfig(), log.logger);
    const route = '/v1/events/stream';
    const metrics = async () => new PrometheusText(await (await fetch(`${gateway.url}/metrics`)).text());
    try {
      const before = await metrics();
      const { accountId, apiKey, keyId } = await stack.createAccount();
      const open = async () => {
        const aborter = new AbortController();
        const response = await fetch(`${gateway.url}${route}`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: aborter.signal,
        });
        expect(response.status).toBe(200);
        const reader = response.body!.getReader();
        let text = '';
        const read = async () => {
          while (!text.includes('\nid: ')) {
            const chunk = await reader.read();
            if (chunk.done) break;
            text += Buffer.from(chunk.value).toString('utf8');
          }
        };
        return { requestId: response.headers.get('x-request-id')!, read, aborter, reader };
      };
      const streams = [await open(), await open(), await open()];
      await stack.api(apiKey).post('/v1/conversations', {});
      await Promise.all(streams.map((opened) => opened.read()));
      // Two closed by their clients, one ended by the gateway (its key revoked).
      await streams[0].reader.cancel();
      streams[1].aborter.abort();
      await runCliCommand('keys:revoke', '--key-id', keyId);
      for (const { requestId } of streams) {
        const line = await eventually(() =>
          log.lines.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId),
        );
        expect(line).toMatchObject({
          msg: 'request completed',
          account_id: accountId,
          route,
          status: 200,
          events_sent: 1,
          duration_ms: expect.any(Number),
        });
      }
      const labels = { method: 'GET', route, status: '200' };
      await eventually(async () => (await metrics()).since(before, 'cms_http_requests_total', labels) === 3);
    } finally {
      await gateway.close();
    }
  });

  it('a gateway receives the event feed only while it has streams open, and STREAM_FEED_LINGER_MS after', async () => {
    const gateway: RunningGateway = await startGateway(
      { ...stack.gatewayConfig(), STREAM_FEED_LINGER_MS: 300 },
      createLogger('test', 'silent'),
    );
    const feedBound = async () =>
      /^cms_event_feed_bound (\d)$/m.exec(await (await fetch(`${gateway.url}/metrics`)).text())![1];
    try {
      expect(await feedBound()).toBe('0');
      const first = await stream(gateway.url, account.apiKey).open();
      expect(await feedBound()).toBe('1');
      const before = await account.api.post('/v1/conversations', {});
      await eventually(() => first.events.some((e) => e.data.conversation_id === before.body.id));
      first.close();
      await eventually(async () => (await feedBound()) === '0');
      // Bound again before the next stream starts: its first event is not missed.
      const second = await stream(gateway.url, account.apiKey).open();
      const after = await account.api.post('/v1/conversations', {});
      await eventually(() => second.events.some((e) => e.data.conversation_id === after.body.id));
      expect(second.events.map((e) => e.data.conversation_id)).toEqual([after.body.id]);
    } finally {
      await gateway.close();
    }
  });

  it('a gateway whose feed queue was deleted answers 503, holds no slot, and sets its feed up again by itself', async () => {
    const gateway: RunningGateway = await startGateway(
      { ...stack.gatewayConfig(), STREAM_FEED_LINGER_MS: 300 },
      createLogger('test', 'silent'),
    );
    const feedQueues = () =>
      new Set(
        rabbitmqList('list_bindings', 'source_name', 'destination_name', 'routing_key')
          .filter(([source, , key]) => source === CONVERSATIONS_EVENTS_EXCHANGE && key === '#')
          .map(([, queue]) => queue),
      );
    const feedBound = async () =>
      /^cms_event_feed_bound (\d)$/m.exec(await (await fetch(`${gateway.url}/metrics`)).text())![1];
    const solo = await stack.createAccount();
    try {
      const before = feedQueues();
      const first = await stream(gateway.url, solo.apiKey).open();
      const [queue] = [...feedQueues()].filter((name) => !before.has(name));
      first.close();
      await eventually(async () => (await feedBound()) === '0');
      // The feed's queue disappears behind the gateway's back (an operator, a broker failure).
      rabbitmqctl('delete_queue', queue);

      const refused = await fetch(`${gateway.url}/v1/events/stream`, {
        headers: { authorization: `Bearer ${solo.apiKey}` },
      });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ code: 'service_unavailable' });

      // The gateway sets its feed up again, and the refused stream left no slot taken: the
      // account can still open as many streams as its plan allows.
      const streams = await eventually(
        async () => {
          try {
            return await Promise.all(
              Array.from({ length: STREAMS_PER_ACCOUNT }, () => stream(gateway.url, solo.apiKey).open()),
            );
          } catch {
            for (const client of clients.splice(0)) client.close();
            return undefined;
          }
        },
        15_000,
        250,
      );
      const created = await solo.api.post('/v1/conversations', {});
      await eventually(() => streams[0].events.some((e) => e.data.conversation_id === created.body.id));
    } finally {
      await gateway.close();
    }
  });

  it('a gateway closing ends its open streams at once', async () => {
    const gateway: RunningGateway = await startGateway(stack.gatewayConfig(), createLogger('test', 'silent'));
    const client = await stream(gateway.url, account.apiKey).open();
    const started = Date.now();
    await gateway.close();
    expect(Date.now() - started).toBeLessThan(3000);
    await eventually(() => client.closedByServer);
  });
});
