import SwaggerParser from '@apidevtools/swagger-parser';
import { randomUUID } from 'node:crypto';
import { DomainError } from '@app/errors';
import { RpcClient } from '@app/messaging';
import { ApiClient, ApiResponse, TestStack } from '@app/testing';

/**
 * Analytics (docs/analytics.md): a fixture written straight into the conversations schema with
 * chosen timestamps (the rollup triggers keep the rollups in step with it, as with any write),
 * whose figures are computed by hand below; the same figures through the API as they happen;
 * tenant isolation; every invalid parameter; and a randomised comparison with the raw data.
 */

type Sender = 'visitor' | 'agent' | 'bot' | 'system';
type Status = 'active' | 'pending' | 'closed';

interface FixtureConversation {
  createdAt: string;
  status: Exclude<Status, 'closed'>;
  messages?: Array<[Sender, string]>;
  leads?: string[];
  /** Status changes in order, each with its time (closed_at for a close). */
  changes?: Array<[Status, string]>;
  /** Set by seed: the id it was written under. */
  id?: string;
}

/** The fixture's conversations and their status counters, as the service itself would write them. */
async function seed(
  stack: TestStack,
  accountId: string,
  conversations: FixtureConversation[],
): Promise<void> {
  for (const conversation of conversations) {
    const id = randomUUID();
    conversation.id = id;
    await stack.query(
      `INSERT INTO conversations.conversations (id, account_id, status, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $4)`,
      [id, accountId, conversation.status, conversation.createdAt],
    );
    const messages = conversation.messages ?? [];
    if (messages.length > 0) {
      await stack.query(
        `INSERT INTO conversations.messages (id, conversation_id, account_id, position, sender, content, created_at)
         SELECT gen_random_uuid(), $1, $2, m.position, m.sender, 'fixture', m.created_at
           FROM unnest($3::text[], $4::timestamptz[]) WITH ORDINALITY AS m (sender, created_at, position)`,
        [id, accountId, messages.map(([sender]) => sender), messages.map(([, at]) => at)],
      );
    }
    for (const at of conversation.leads ?? []) {
      await stack.query(
        `INSERT INTO conversations.leads (id, conversation_id, account_id, email, created_at)
         VALUES (gen_random_uuid(), $1, $2, 'lead@example.com', $3)`,
        [id, accountId, at],
      );
    }
    let status: Status = conversation.status;
    for (const [next, at] of conversation.changes ?? []) {
      await stack.query(
        `UPDATE conversations.conversations SET status = $2, closed_at = CASE WHEN $2 = 'closed' THEN $3::timestamptz END
          WHERE id = $1`,
        [id, next, at],
      );
      status = next;
    }
    await stack.query(
      `INSERT INTO conversations.status_counts (account_id, status, count) VALUES ($1, $2, 1)
       ON CONFLICT (account_id, status) DO UPDATE SET count = status_counts.count + 1`,
      [accountId, status],
    );
  }
}

function expectOk(res: ApiResponse): void {
  expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({
    status: 200,
    body: 'ok',
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/json(;|$)/);
}

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

/**
 * Account A. FROM is deliberately not on a 15-minute slot, TO is; Europe/Warsaw moves to summer
 * time on 2026-03-29 at 01:00Z (its 29 March is 23 hours long).
 */
const FROM = '2026-03-28T09:07:30.250Z';
const TO = '2026-03-30T09:00:00.000Z';
const FIXTURE: FixtureConversation[] = [
  // C0, before the range: nothing of it counts (except its current status).
  {
    createdAt: '2026-03-27T20:00:00Z',
    status: 'active',
    messages: [
      ['visitor', '2026-03-27T20:00:00Z'],
      ['agent', '2026-03-27T20:01:00Z'],
    ],
    changes: [['closed', '2026-03-27T21:00:00Z']],
  },
  // C7, one millisecond before FROM, in the same 15-minute slot: must not count.
  {
    createdAt: '2026-03-28T09:07:30.249Z',
    status: 'active',
    messages: [['visitor', '2026-03-28T09:07:30.249Z']],
    leads: ['2026-03-28T09:07:30.249Z'],
  },
  // C1, started exactly at FROM: first response 30 s (bot), resolved in 3600 s.
  {
    createdAt: FROM,
    status: 'active',
    messages: [
      ['visitor', FROM],
      ['bot', '2026-03-28T09:08:00.250Z'],
      ['visitor', '2026-03-28T09:20:00Z'],
      ['agent', '2026-03-28T09:21:00Z'],
    ],
    changes: [['closed', '2026-03-28T10:07:30.250Z']],
  },
  // C2, agent writes first; the first response is the agent's message after the visitor's: 120 s.
  {
    createdAt: '2026-03-28T12:00:00Z',
    status: 'pending',
    messages: [
      ['agent', '2026-03-28T12:00:00Z'],
      ['visitor', '2026-03-28T12:01:00Z'],
      ['system', '2026-03-28T12:01:30Z'],
      ['agent', '2026-03-28T12:03:00Z'],
    ],
    leads: ['2026-03-28T12:02:00Z'],
  },
  // C3, no agent or bot reply at all; closed after the DST change, 9000 s after it started.
  {
    createdAt: '2026-03-28T23:30:00Z',
    status: 'active',
    messages: [
      ['visitor', '2026-03-28T23:30:00Z'],
      ['visitor', '2026-03-28T23:45:00Z'],
      ['system', '2026-03-28T23:50:00Z'],
    ],
    leads: ['2026-03-28T23:40:00Z'],
    changes: [['closed', '2026-03-29T02:00:00Z']],
  },
  // C4, closed, reopened and closed again: two closes, resolutions 3600 s and 82800 s; FR 600 s.
  {
    createdAt: '2026-03-29T08:00:00Z',
    status: 'active',
    messages: [
      ['visitor', '2026-03-29T08:00:00Z'],
      ['agent', '2026-03-29T08:10:00Z'],
      ['visitor', '2026-03-30T06:00:00Z'],
      ['agent', '2026-03-30T06:30:00Z'],
    ],
    changes: [
      ['closed', '2026-03-29T09:00:00Z'],
      ['active', '2026-03-30T06:00:00Z'],
      ['closed', '2026-03-30T07:00:00Z'],
    ],
  },
  // C5, one millisecond before TO; its reply and lead land exactly at TO and do not count.
  {
    createdAt: '2026-03-30T08:59:59.999Z',
    status: 'active',
    messages: [
      ['visitor', '2026-03-30T08:59:59.999Z'],
      ['agent', TO],
    ],
    leads: [TO],
  },
  // C6, exactly at TO: outside.
  { createdAt: TO, status: 'active', messages: [['visitor', TO]] },
];

/** Account B: busy in the same hours, so any leak into A's figures would show. */
const OTHER_FIXTURE: FixtureConversation[] = [
  {
    createdAt: '2026-03-28T10:00:00Z',
    status: 'active',
    messages: [
      ['visitor', '2026-03-28T10:00:00Z'],
      ['visitor', '2026-03-28T10:01:00Z'],
      ['agent', '2026-03-28T10:02:00Z'],
    ],
    leads: ['2026-03-28T10:03:00Z'],
    changes: [['closed', '2026-03-28T10:30:00Z']],
  },
];

describe('analytics', () => {
  let stack: TestStack;
  let a: ApiClient;
  let b: ApiClient;
  let empty: ApiClient;

  beforeAll(async () => {
    stack = await TestStack.start();
    const [accountA, accountB, accountC] = await Promise.all([
      stack.createAccount('business', 'Analytics A'),
      stack.createAccount('business', 'Analytics B'),
      stack.createAccount('business', 'Analytics C'),
    ]);
    [a, b, empty] = [accountA.api, accountB.api, accountC.api];
    await seed(stack, accountA.accountId, FIXTURE);
    await seed(stack, accountB.accountId, OTHER_FIXTURE);
  });
  afterAll(() => stack?.close());

  const summary = async (
    api: ApiClient,
    params: Record<string, string>,
    headers?: Record<string, string>,
  ) => {
    const res = await api.get(`/v1/analytics/summary?${query(params)}`, { headers });
    expectOk(res);
    return res.body;
  };
  const timeseries = async (api: ApiClient, params: Record<string, string>) => {
    const res = await api.get(`/v1/analytics/timeseries?${query(params)}`);
    expectOk(res);
    return res.body;
  };

  describe('the hand-computed fixture', () => {
    it('summary: every figure', async () => {
      expect(await summary(a, { from: FROM, to: TO })).toEqual({
        from: FROM,
        to: TO,
        time_zone: 'UTC',
        conversations: {
          // Current status of all of A's conversations: C5, C6, C7 active; C2 pending; C0, C1, C3, C4 closed.
          by_status: [
            { status: 'active', count: 3 },
            { status: 'closed', count: 4 },
            { status: 'pending', count: 1 },
          ],
          started: 5, // C1 (at FROM), C2, C3, C4, C5
          closed: 4, // C1, C3, C4 twice
        },
        messages: {
          total: 16,
          by_sender: { visitor: 8, agent: 5, bot: 1, system: 2 },
        },
        leads_captured: 2, // C2, C3
        // C1 30, C2 120, C4 600: median 120; p90 at rank 1.8 = 120 + 0.8 * 480
        first_response_time: { count: 3, median_seconds: 120, p90_seconds: 504 },
        // 3600, 3600, 9000, 82800: median 6300; p90 at rank 2.7 = 9000 + 0.7 * 73800
        resolution_time: { count: 4, median_seconds: 6300, p90_seconds: 60660 },
        // Visitor messages by UTC hour: 8h C4 + C5, 9h C1 x2, 23h C3 x2: the earliest of the tie.
        busiest_hour: { hour: 8, messages_received: 2 },
      });
    });

    it('summary: local hours in a time zone, across its DST change', async () => {
      const body = await summary(a, { from: FROM, to: TO, tz: 'Europe/Warsaw' });
      // 10h local: C1 x2 (CET), C4's first (CEST), C5 (CEST).
      expect(body.busiest_hour).toEqual({ hour: 10, messages_received: 4 });
      expect(body.time_zone).toBe('Europe/Warsaw');
      expect(body.messages.by_sender.visitor).toBe(8);
    });

    it('summary: a `to` one millisecond earlier leaves out what happened at it', async () => {
      const body = await summary(a, { from: FROM, to: '2026-03-30T08:59:59.999Z' });
      expect(body.conversations.started).toBe(4);
      expect(body.messages.by_sender).toEqual({ visitor: 7, agent: 5, bot: 1, system: 2 });
    });

    it('summary: status values in the output dialect, field names in English', async () => {
      const body = await summary(a, { from: FROM, to: TO }, { 'accept-language': 'ms' });
      expect(body.conversations.by_status).toEqual([
        { status: 'aktif', count: 3 },
        { status: 'ditutup', count: 4 },
        { status: 'belum selesai', count: 1 },
      ]);
    });

    it('timeseries: local days in Europe/Warsaw, a 23-hour day included', async () => {
      expect(
        await timeseries(a, {
          metric: 'messages_received',
          interval: 'day',
          from: FROM,
          to: TO,
          tz: 'Europe/Warsaw',
        }),
      ).toEqual({
        metric: 'messages_received',
        interval: 'day',
        from: FROM,
        to: TO,
        time_zone: 'Europe/Warsaw',
        total: 8,
        data: [
          { start: '2026-03-28T00:00:00.000+01:00', count: 3 }, // C1 x2, C2
          { start: '2026-03-29T00:00:00.000+01:00', count: 3 }, // C3 x2 (just after local midnight), C4
          { start: '2026-03-30T00:00:00.000+02:00', count: 2 }, // C4 reopened, C5
        ],
      });
    });

    it('timeseries: hours across the spring-forward gap', async () => {
      const range = {
        from: '2026-03-28T23:00:00Z',
        to: '2026-03-29T03:00:00Z',
        tz: 'Europe/Warsaw',
        interval: 'hour',
      };
      const starts = [
        '2026-03-29T00:00:00.000+01:00',
        '2026-03-29T01:00:00.000+01:00',
        '2026-03-29T03:00:00.000+02:00',
        '2026-03-29T04:00:00.000+02:00',
      ];
      const received = await timeseries(a, { ...range, metric: 'messages_received' });
      expect(received.data).toEqual(starts.map((start, i) => ({ start, count: [2, 0, 0, 0][i] })));
      const closed = await timeseries(a, { ...range, metric: 'conversations_closed' });
      expect(closed.data).toEqual(starts.map((start, i) => ({ start, count: [0, 0, 0, 1][i] })));
    });

    it('timeseries: hours of a half-hour zone start at half past in UTC', async () => {
      const body = await timeseries(a, {
        metric: 'messages_received',
        interval: 'hour',
        from: '2026-03-28T09:00:00Z',
        to: '2026-03-28T13:00:00Z',
        tz: 'Asia/Kolkata',
      });
      expect(body.data).toEqual([
        { start: '2026-03-28T14:00:00.000+05:30', count: 3 }, // C7, C1 x2 (from 14:30 local)
        { start: '2026-03-28T15:00:00.000+05:30', count: 0 },
        { start: '2026-03-28T16:00:00.000+05:30', count: 0 },
        { start: '2026-03-28T17:00:00.000+05:30', count: 1 }, // C2 at 17:31 local
        { start: '2026-03-28T18:00:00.000+05:30', count: 0 },
      ]);
    });

    it('timeseries: the hour repeated by the autumn change is a bucket of its own', async () => {
      const body = await timeseries(a, {
        metric: 'conversations_started',
        interval: 'hour',
        from: '2026-10-25T00:00:00Z',
        to: '2026-10-25T03:00:00Z',
        tz: 'Europe/Warsaw',
      });
      expect(body.data).toEqual([
        { start: '2026-10-25T02:00:00.000+02:00', count: 0 },
        { start: '2026-10-25T02:00:00.000+01:00', count: 0 },
        { start: '2026-10-25T03:00:00.000+01:00', count: 0 },
      ]);
    });

    it('timeseries: UTC days with empty buckets as zero, and each metric', async () => {
      const days = ['2026-03-28T00:00:00.000Z', '2026-03-29T00:00:00.000Z', '2026-03-30T00:00:00.000Z'];
      const expected: Record<string, number[]> = {
        messages_sent: [4, 1, 1], // C1 bot + agent, C2 agent x2 | C4 | C4
        leads_captured: [2, 0, 0],
        conversations_started: [3, 1, 1], // C1, C2, C3 | C4 | C5
        conversations_closed: [1, 2, 1], // C1 | C3, C4 | C4 again
        messages_received: [5, 1, 2], // C1 x2, C2, C3 x2 | C4 | C4 reopened, C5
      };
      for (const [metric, counts] of Object.entries(expected)) {
        const body = await timeseries(a, { metric, from: FROM, to: TO });
        expect({ metric, interval: body.interval, data: body.data }).toEqual({
          metric,
          interval: 'day',
          data: days.map((start, i) => ({ start, count: counts[i] })),
        });
        expect(body.total).toBe(counts.reduce((x, y) => x + y));
      }
    });

    it('timeseries: ISO weeks from local Monday midnights', async () => {
      const body = await timeseries(a, {
        metric: 'conversations_started',
        interval: 'week',
        from: FROM,
        to: TO,
        tz: 'Europe/Warsaw',
      });
      expect(body.data).toEqual([
        { start: '2026-03-23T00:00:00.000+01:00', count: 4 },
        { start: '2026-03-30T00:00:00.000+02:00', count: 1 },
      ]);
    });

    it('timeseries: UTC hours cut by an unaligned `from`; dates without offset read in `tz`', async () => {
      const hours = await timeseries(a, {
        metric: 'messages_received',
        interval: 'hour',
        from: FROM,
        to: '2026-03-28T13:00:00Z',
      });
      expect(hours.data).toEqual([
        { start: '2026-03-28T09:00:00.000Z', count: 2 },
        { start: '2026-03-28T10:00:00.000Z', count: 0 },
        { start: '2026-03-28T11:00:00.000Z', count: 0 },
        { start: '2026-03-28T12:00:00.000Z', count: 1 },
      ]);
      const local = await timeseries(a, {
        metric: 'leads_captured',
        from: '2026-03-28',
        to: '2026-03-30',
        tz: 'Europe/Warsaw',
      });
      expect({
        from: local.from,
        to: local.to,
        counts: local.data.map((d: { count: number }) => d.count),
      }).toEqual({
        from: '2026-03-27T23:00:00.000Z',
        to: '2026-03-29T22:00:00.000Z',
        counts: [2, 1], // C7 and C2 on the 28th local; C3 at 00:40 local on the 29th
      });
    });

    it('an empty range has no buckets and zero figures', async () => {
      const body = await timeseries(a, { metric: 'messages_received', from: FROM, to: FROM });
      expect({ total: body.total, data: body.data }).toEqual({ total: 0, data: [] });
      const figures = await summary(a, { from: FROM, to: FROM });
      expect(figures.messages.total).toBe(0);
      expect(figures.first_response_time).toEqual({ count: 0, median_seconds: null, p90_seconds: null });
    });
  });

  describe('tenant isolation', () => {
    it("one account's activity never shows in another's analytics", async () => {
      expect(await summary(b, { from: FROM, to: TO })).toEqual({
        from: FROM,
        to: TO,
        time_zone: 'UTC',
        conversations: {
          by_status: [
            { status: 'active', count: 0 },
            { status: 'closed', count: 1 },
            { status: 'pending', count: 0 },
          ],
          started: 1,
          closed: 1,
        },
        messages: { total: 3, by_sender: { visitor: 2, agent: 1, bot: 0, system: 0 } },
        leads_captured: 1,
        first_response_time: { count: 1, median_seconds: 120, p90_seconds: 120 },
        resolution_time: { count: 1, median_seconds: 1800, p90_seconds: 1800 },
        busiest_hour: { hour: 10, messages_received: 2 },
      });
      const nothing = await summary(empty, { from: FROM, to: TO });
      expect(nothing.conversations).toEqual({
        by_status: [
          { status: 'active', count: 0 },
          { status: 'closed', count: 0 },
          { status: 'pending', count: 0 },
        ],
        started: 0,
        closed: 0,
      });
      expect([nothing.messages.total, nothing.leads_captured, nothing.busiest_hour]).toEqual([0, 0, null]);
      const series = await timeseries(empty, { metric: 'messages_received', from: FROM, to: TO });
      expect(series.data.map((d: { count: number }) => d.count)).toEqual([0, 0, 0]);
    });
  });

  describe('as it happens, through the API', () => {
    it('every write is counted by the very next read', async () => {
      const { api } = await stack.createAccount('business', 'Analytics live');
      const figures = async () => {
        const body = await summary(api, {});
        return {
          started: body.conversations.started,
          closed: body.conversations.closed,
          by_sender: body.messages.by_sender,
          leads: body.leads_captured,
          first: body.first_response_time.count,
          resolutions: body.resolution_time.count,
        };
      };
      const senders = (visitor: number, agent: number) => ({ visitor, agent, bot: 0, system: 0 });

      const created = await api.post('/v1/conversations', { message: { sender: 'visitor', content: 'hi' } });
      expect(created.status).toBe(201);
      const id = created.body.id;
      expect(await figures()).toEqual({
        started: 1,
        closed: 0,
        by_sender: senders(1, 0),
        leads: 0,
        first: 0,
        resolutions: 0,
      });

      expect(
        (await api.post(`/v1/conversations/${id}/messages`, { sender: 'agent', content: 'hello' })).status,
      ).toBe(201);
      expect(await figures()).toEqual({
        started: 1,
        closed: 0,
        by_sender: senders(1, 1),
        leads: 0,
        first: 1,
        resolutions: 0,
      });

      expect((await api.post(`/v1/conversations/${id}/lead`, { email: 'ada@example.com' })).status).toBe(201);
      expect((await api.patch(`/v1/conversations/${id}`, { status: 'ditutup' })).status).toBe(200);
      expect(await figures()).toEqual({
        started: 1,
        closed: 1,
        by_sender: senders(1, 1),
        leads: 1,
        first: 1,
        resolutions: 1,
      });

      expect((await api.patch(`/v1/conversations/${id}`, { status: 'active' })).status).toBe(200);
      expect(
        (await api.post(`/v1/conversations/${id}/messages`, { sender: 'visitor', content: 'one more' }))
          .status,
      ).toBe(201);
      expect((await api.patch(`/v1/conversations/${id}`, { status: 'closed' })).status).toBe(200);
      expect(await figures()).toEqual({
        started: 1,
        closed: 2,
        by_sender: senders(2, 1),
        leads: 1,
        first: 1,
        resolutions: 2,
      });

      const today = await timeseries(api, { metric: 'messages_received', interval: 'hour' });
      expect(today.total).toBe(2);
      expect(today.data).toHaveLength(24 * 30 + 1);
      const body = await summary(api, {});
      expect(body.conversations.by_status).toEqual([
        { status: 'active', count: 0 },
        { status: 'closed', count: 1 },
        { status: 'pending', count: 0 },
      ]);
      expect(Date.parse(body.to) - Date.parse(body.from)).toBe(30 * 86_400_000);
    });
  });

  describe('invalid parameters', () => {
    const cases: Array<[string, string, string[]]> = [
      ['summary', 'from=yesterday', ['from']],
      ['summary', 'to=2026-02-30', ['to']],
      ['summary', 'from=2026-03-01T25:00:00Z', ['from']],
      ['summary', 'from=2026-02-01&to=2026-01-01', ['from']],
      ['summary', 'from=2025-01-01&to=2026-02-05T00:00:00.001Z', ['to']],
      ['summary', 'from=2020-01-01', ['to']],
      ['summary', 'tz=Mars%2FOlympus_Mons', ['tz']],
      ['summary', 'tz=%2B01%3A00', ['tz']],
      ['summary', 'from=2026-01-01&from=2026-01-02', ['from']],
      ['timeseries', 'interval=day', ['metric']],
      ['timeseries', 'metric=revenue', ['metric']],
      ['timeseries', 'metric=messages_sent&interval=month', ['interval']],
      ['timeseries', 'metric=messages_sent&interval=hour&tz=Europe%2FAtlantis', ['tz']],
      ['timeseries', 'metric=messages_sent&from=2026-02-01&to=2026-01-31T23:59:59Z', ['from']],
      ['timeseries', 'metric=messages_sent&from=2024-01-01&to=2026-01-01', ['to']],
      ['timeseries', 'metric=messages_sent&to=not-a-date', ['to']],
      // The parameters' schema first (every problem at once), then the range they name.
      ['timeseries', 'metric=x&interval=y&tz=z&from=w', ['metric', 'interval']],
      ['timeseries', 'metric=messages_sent&tz=z&from=w', ['tz', 'from']],
      ['summary', 'from=2026-01-01&sort=newest', ['sort']],
    ];

    it.each(cases)('%s?%s is a 400 naming %j', async (endpoint, params, fields) => {
      const path = `/v1/analytics/${endpoint}?${params}`;
      const res = await a.get(path);
      expect({ status: res.status, code: res.body?.code }).toEqual({
        status: 400,
        code: 'validation_failed',
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
      expect(res.body).toMatchObject({
        status: 400,
        request_id: res.headers.get('x-request-id'),
        instance: `/v1/analytics/${endpoint}`,
      });
      expect(res.body.errors.map((error: { field: string }) => error.field)).toEqual(fields);
    });

    it('the conversations service checks every payload again, whoever sent it', async () => {
      const rpc = stack.gateway.app.get(RpcClient);
      const range = { from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z', timeZone: 'UTC' };
      const refused = async (pattern: string, data: object) => {
        const error = await rpc
          .send({ pattern, data, accountId: randomUUID(), requestId: randomUUID() })
          .catch((e) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('validation_failed');
        return (error as DomainError).errors!.map((e) => e.field);
      };
      expect(await refused('analytics.summary', { ...range, timeZone: 'Etc/Nowhere' })).toEqual(['tz']);
      expect(await refused('analytics.summary', { ...range, from: '2026-01-03T00:00:00.000Z' })).toEqual([
        'from',
      ]);
      expect(await refused('analytics.summary', { ...range, from: '2024-11-26T00:00:00.000Z' })).toEqual([
        'to',
      ]);
      expect(await refused('analytics.summary', { ...range, to: 'tomorrow' })).toEqual(['to']);
      const series = { ...range, metric: 'messages_sent', interval: 'day' };
      expect(await refused('analytics.timeseries', { ...series, metric: 'revenue' })).toEqual(['metric']);
      expect(await refused('analytics.timeseries', { ...series, interval: 'minute' })).toEqual(['interval']);
    });

    it('the same authentication and limits as every endpoint', async () => {
      const anonymous = await a.get('/v1/analytics/summary', { apiKey: null });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const limited = await a.get('/v1/analytics/timeseries?metric=leads_captured');
      expect(limited.status).toBe(200);
      expect(limited.headers.get('ratelimit-policy')).toMatch(/^"hourly";q=\d+;w=3600$/);
    });
  });

  describe('OpenAPI', () => {
    it('documents both endpoints, their parameters and examples', async () => {
      const res = await a.get('/openapi.json', { apiKey: null });
      expect(res.status).toBe(200);
      const document = (await SwaggerParser.dereference(res.body)) as any;
      const summaryOp = document.paths['/v1/analytics/summary'].get;
      const seriesOp = document.paths['/v1/analytics/timeseries'].get;
      const names = (op: { parameters: Array<{ name: string; in: string }> }) =>
        op.parameters
          .filter((p) => p.in === 'query')
          .map((p) => p.name)
          .sort();
      expect(names(summaryOp)).toEqual(['from', 'to', 'tz']);
      expect(names(seriesOp)).toEqual(['from', 'interval', 'metric', 'to', 'tz']);
      const metric = seriesOp.parameters.find((p: { name: string }) => p.name === 'metric');
      expect(metric).toMatchObject({
        required: true,
        schema: {
          enum: [
            'conversations_started',
            'conversations_closed',
            'messages_received',
            'messages_sent',
            'leads_captured',
          ],
        },
      });
      for (const op of [summaryOp, seriesOp]) {
        const ok = op.responses['200'].content['application/json'];
        expect(ok.schema.type).toBe('object');
        expect(ok.example).toBeDefined();
        expect(op.responses['400']).toBeDefined();
        expect(op.security).toEqual([{ bearer: [] }]);
      }
      // The examples have exactly the shape the endpoints return.
      const live = await summary(a, { from: FROM, to: TO });
      const shape = (value: unknown): unknown =>
        value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]))
          : typeof value;
      expect(shape(summaryOp.responses['200'].content['application/json'].example)).toEqual(shape(live));
    });
  });

  describe('agrees with the raw data', () => {
    it('for random activity, random ranges, before and after compaction', async () => {
      const { accountId, api } = await stack.createAccount('business', 'Analytics random');
      const random = mulberry32(20260323);
      const base = Date.now() - 5 * 86_400_000; // in the past: the compaction folds finished slots only
      const span = 3 * 86_400_000;
      const conversations: FixtureConversation[] = [];
      const generate = (n: number) => {
        const batch: FixtureConversation[] = [];
        for (let i = 0; i < n; i++) {
          let t = base + Math.floor(random() * span);
          const at = () => new Date((t += Math.floor(random() * 3_600_000))).toISOString();
          const createdAt = at();
          const messages: Array<[Sender, string]> = [];
          const count = Math.floor(random() * 6);
          for (let k = 0; k < count; k++) {
            messages.push([
              (['visitor', 'agent', 'bot', 'system'] as Sender[])[Math.floor(random() * 4)],
              at(),
            ]);
          }
          const changes: Array<[Status, string]> = [];
          for (let k = 0; k < Math.floor(random() * 4); k++)
            changes.push([k % 2 === 0 ? 'closed' : 'active', at()]);
          batch.push({ createdAt, status: 'active', messages, changes, leads: random() < 0.3 ? [at()] : [] });
        }
        conversations.push(...batch);
        // Written from several connections at once, so the rollups hold several stripes per slot.
        return Promise.all(
          [0, 1, 2, 3].map((part) =>
            seed(
              stack,
              accountId,
              batch.filter((_, i) => i % 4 === part),
            ),
          ),
        );
      };
      await generate(40);

      const ranges = Array.from({ length: 6 }, () => {
        const from = base - 3_600_000 + Math.floor(random() * span);
        return [from, from + Math.floor(random() * span)];
      });
      const check = async () => {
        for (const [from, to] of ranges) {
          const params = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
          const body = await summary(api, params);
          const expected = expectedFigures(conversations, from, to);
          expect({
            started: body.conversations.started,
            closed: body.conversations.closed,
            by_sender: body.messages.by_sender,
            leads: body.leads_captured,
            first: body.first_response_time,
            resolution: body.resolution_time,
          }).toEqual(expected);
          const series = await timeseries(api, {
            ...params,
            metric: 'messages_sent',
            interval: 'hour',
            tz: 'Asia/Kathmandu',
          });
          expect(series.total).toBe(expected.by_sender.agent + expected.by_sender.bot);
        }
      };
      const compact = () => stack.compactAnalytics();
      await check();
      await compact();
      await check();
      // Late writes into slots already folded, folded again onto the same rows.
      await generate(20);
      await check();
      await compact();
      const left = await stack.query(
        `SELECT count(*)::int AS n FROM conversations.analytics_slots WHERE account_id = $1 AND stripe >= 0`,
        [accountId],
      );
      expect(left[0].n).toBe(0);
      await check();

      // Deleted conversations leave the figures exactly, in live and folded slots alike.
      await generate(10);
      const deleted = conversations.filter(() => random() < 0.3);
      for (const conversation of deleted) {
        const res = await api.request('DELETE', `/v1/conversations/${conversation.id}`);
        expect(res.status).toBe(204);
        conversations.splice(conversations.indexOf(conversation), 1);
      }
      expect(deleted.length).toBeGreaterThan(5);
      await check();
      await compact();
      await check();
      const [{ rollups }] = await stack.query(
        `SELECT json_object_agg(status, count) AS rollups FROM conversations.status_counts WHERE account_id = $1`,
        [accountId],
      );
      const [{ rows }] = await stack.query(
        `SELECT json_object_agg(status, n) AS rows FROM (SELECT status, count(*)::int AS n
           FROM conversations.conversations WHERE account_id = $1 GROUP BY status) c`,
        [accountId],
      );
      // The per-status counters behind `by_status` and the list totals agree with the rows left.
      const counted = Object.entries(rollups as Record<string, number>).filter(([, n]) => Number(n) > 0);
      expect(Object.fromEntries(counted.map(([status, n]) => [status, Number(n)]))).toEqual(rows);
    });
  });
});

/** What the summary must say, computed from the fixture itself. */
function expectedFigures(conversations: FixtureConversation[], from: number, to: number) {
  const inRange = (iso: string) => Date.parse(iso) >= from && Date.parse(iso) < to;
  const bySender = { visitor: 0, agent: 0, bot: 0, system: 0 };
  const firstResponses: number[] = [];
  const resolutions: number[] = [];
  let started = 0;
  let leads = 0;
  for (const c of conversations) {
    if (inRange(c.createdAt)) started++;
    leads += (c.leads ?? []).filter(inRange).length;
    const messages = c.messages ?? [];
    for (const [sender, at] of messages) if (inRange(at)) bySender[sender]++;
    const firstVisitor = messages.findIndex(([sender]) => sender === 'visitor');
    const reply = messages.findIndex(
      ([sender], i) => i > firstVisitor && (sender === 'agent' || sender === 'bot'),
    );
    if (firstVisitor >= 0 && reply >= 0 && inRange(messages[reply][1])) {
      firstResponses.push(Date.parse(messages[reply][1]) - Date.parse(messages[firstVisitor][1]));
    }
    for (const [status, at] of c.changes ?? []) {
      if (status === 'closed' && inRange(at)) resolutions.push(Date.parse(at) - Date.parse(c.createdAt));
    }
  }
  return {
    started,
    closed: resolutions.length,
    by_sender: bySender,
    leads,
    first: durationStats(firstResponses),
    resolution: durationStats(resolutions),
  };
}

/** percentile_cont: linear interpolation between the closest ranks. */
function durationStats(ms: number[]) {
  const sorted = [...ms].sort((x, y) => x - y);
  const percentile = (p: number) => {
    const rank = p * (sorted.length - 1);
    const low = Math.floor(rank);
    const value = sorted[low] + (rank - low) * ((sorted[Math.ceil(rank)] ?? sorted[low]) - sorted[low]);
    return Math.round(value) / 1000;
  };
  return {
    count: sorted.length,
    median_seconds: sorted.length ? percentile(0.5) : null,
    p90_seconds: sorted.length ? percentile(0.9) : null,
  };
}

function mulberry32(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
