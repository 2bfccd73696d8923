import { randomUUID } from 'node:crypto';
import { expectProblem, eventually, TestAccount, TestStack, WebhookReceivers } from '@app/testing';

/**
 * Deleting a conversation (docs/conversations.md, "Deleting a conversation"): after
 * `DELETE /v1/conversations/{id}` nothing of it is readable, no table of any schema holds its
 * text, pending webhook deliveries of its events are cancelled, stored idempotent replies that
 * showed it are gone, and one `conversation.deleted` (id only) reaches the webhooks that name it,
 * in each dialect. The analytics correction is checked against a recount in analytics.e2e-spec.
 */

/** Every table of every schema the services own, with the rows that hold `text` anywhere. */
async function tablesHolding(stack: TestStack, text: string): Promise<Record<string, number>> {
  const tables = await stack.query<{ name: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY 1`,
  );
  expect(tables.map((t) => t.name)).toEqual(
    expect.arrayContaining([
      'conversations.messages',
      'conversations.outbox',
      'conversations.processed_commands',
      'gateway.idempotency_keys',
      'webhooks.events',
      'webhooks.delivery_attempts',
    ]),
  );
  const found: Record<string, number> = {};
  for (const { name } of tables) {
    const [{ n }] = await stack.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${name} t WHERE strpos(t::text, $1) > 0`,
      [text],
    );
    if (n > 0) found[name] = n;
  }
  return found;
}

describe('DELETE /v1/conversations/{id}', () => {
  let stack: TestStack;
  let account: TestAccount;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    // Retries an hour apart: a failed delivery is still pending when the conversation goes.
    stack = await TestStack.start({ webhooks: { WEBHOOK_RETRY_SCHEDULE: '3600' } });
    account = await stack.createAccount();
  });
  afterAll(async () => {
    await receivers.closeAll();
    await stack?.close();
  });

  it('erases the conversation from every store, cancels its deliveries and tells the webhooks', async () => {
    const api = account.api;
    const marker = `erase-me-${randomUUID()}`;
    const [en, ms, pl, failing] = await Promise.all([0, 1, 2, 3].map(() => receivers.start()));
    // The receivers echo what they got, so the attempt log holds the marker too.
    for (const receiver of [en, ms, pl]) receiver.answer((r) => ({ status: 200, body: r.body }));
    failing.answer((r) => ({ status: 500, body: r.body }));
    for (const [receiver, dialect] of [
      [en, 'en'],
      [ms, 'ms'],
      [pl, 'pl'],
    ] as const) {
      const created = await api.post('/v1/webhooks', {
        url: receiver.url,
        dialect,
        events: ['*', 'message.sent', 'conversation.deleted'],
      });
      expect(created.status).toBe(201);
    }
    expect((await api.post('/v1/webhooks', { url: failing.url, events: ['*'] })).status).toBe(201);
    const other = await api.post('/v1/conversations', { subject: 'Another conversation' });

    const conversation = await api.post('/v1/conversations', {
      subject: `Subject ${marker}`,
      visitor: { name: `Visitor ${marker}`, email: 'visitor@example.com' },
      metadata: { note: marker },
      tags: ['gdpr'],
      message: { sender: 'visitor', content: `Hello ${marker}` },
    });
    expect(conversation.status).toBe(201);
    const id: string = conversation.body.id;
    const messageKey = randomUUID();
    const messageBody = { sender: 'agent', content: `Reply ${marker}` };
    const sent = await api.post(`/v1/conversations/${id}/messages`, messageBody, {
      headers: { 'Idempotency-Key': messageKey },
    });
    expect(sent.status).toBe(201);
    expect(
      (await api.post(`/v1/conversations/${id}/lead`, { name: marker, phone: '+48 600 000 000' })).status,
    ).toBe(201);
    expect((await api.patch(`/v1/conversations/${id}`, { status: 'closed' })).status).toBe(200);

    // conversation.started, message.received, conversation.closed, lead.captured, message.sent.
    await en.waitFor(5, (r) => r.json.data?.conversation?.id === id || r.json.data?.conversation_id === id);
    await failing.waitFor(1, (r) => r.json.type === 'conversation.closed');
    await eventually(async () => {
      const [{ n }] = await stack.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhooks.deliveries
          WHERE conversation_id = $1 AND status = 'pending' AND attempt_count = 1`,
        [id],
      );
      return n === 4;
    }, 20_000);
    expect(Object.keys(await tablesHolding(stack, marker))).toEqual(
      expect.arrayContaining(['conversations.messages', 'webhooks.events', 'gateway.idempotency_keys']),
    );

    const deleteKey = randomUUID();
    const deleted = await api.request('DELETE', `/v1/conversations/${id}`, {
      headers: { 'Idempotency-Key': deleteKey },
    });
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
    // The same key answers the first 204 again; another DELETE finds nothing.
    const replayed = await api.request('DELETE', `/v1/conversations/${id}`, {
      headers: { 'Idempotency-Key': deleteKey },
    });
    expect(replayed.status).toBe(204);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expectProblem(await api.request('DELETE', `/v1/conversations/${id}`), 404, 'not_found');
    // The Polish path names the same operation.
    expectProblem(await api.request('DELETE', `/v1/rozmowy/${id}`), 404, 'not_found');

    // Gone from every read.
    expectProblem(await api.get(`/v1/conversations/${id}`), 404, 'not_found');
    expectProblem(await api.get(`/v1/conversations/${id}/messages`), 404, 'not_found');
    expectProblem(await api.get(`/v1/conversations/${id}/lead`), 404, 'not_found');
    const list = await api.get('/v1/conversations?limit=100');
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([other.body.id]);
    expect(list.body.pagination.total).toBe(1);
    // A retry of a request that showed it is told it is gone, not shown it again.
    expectProblem(
      await api.post(`/v1/conversations/${id}/messages`, messageBody, {
        headers: { 'Idempotency-Key': messageKey },
      }),
      404,
      'not_found',
    );

    // The events API keeps only the deletion, which carries the id alone.
    const events = await api.get(`/v1/events?conversation_id=${id}`);
    expect(events.body.data.map((e: { type: string; data: unknown }) => [e.type, e.data])).toEqual([
      ['conversation.deleted', { id }],
    ]);
    const byType = await api.get('/v1/events?type=conversation.deleted');
    expect(byType.body.data.map((e: { conversation_id: string }) => e.conversation_id)).toEqual([id]);

    // Each webhook that names it gets one conversation.deleted, in its dialect.
    for (const [receiver, type] of [
      [en, 'conversation.deleted'],
      [ms, 'perbualan.dipadam'],
      [pl, 'rozmowa.usunięta'],
    ] as const) {
      const [received] = await receiver.waitFor(1, (r) => r.json.data?.id === id);
      expect({ type: received.json.type, data: received.json.data }).toEqual({ type, data: { id } });
    }
    // The failing receiver's deliveries are cancelled: failed, never attempted again.
    await eventually(async () => {
      const rows = await stack.query<{ status: string; next_attempt_at: Date | null }>(
        `SELECT status, next_attempt_at FROM webhooks.deliveries WHERE conversation_id = $1 AND event_type <> $2`,
        [id, 'conversation.deleted'],
      );
      expect(rows.length).toBeGreaterThanOrEqual(19);
      expect(rows.filter((row) => row.status === 'pending')).toEqual([]);
      return true;
    }, 20_000);
    const failedDeliveries = await api.get(
      `/v1/webhooks/${(await api.get('/v1/webhooks')).body.data.find((w: { url: string }) => w.url === failing.url).id}/deliveries?limit=100`,
    );
    // Its four events' deliveries failed; the other conversation's one still waits for its retry.
    expect(failedDeliveries.body.data.map((d: { status: string }) => d.status).sort()).toEqual([
      'failed',
      'failed',
      'failed',
      'failed',
      'pending',
    ]);

    // Nowhere in any table of any schema.
    await eventually(async () => {
      expect(await tablesHolding(stack, marker)).toEqual({});
      return true;
    }, 20_000);
    // Analytics no longer count it.
    const summary = await api.get(
      `/v1/analytics/summary?from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`,
    );
    expect(summary.body.conversations.started).toBe(1);
    expect(summary.body.conversations.closed).toBe(0);
    expect(summary.body.leads_captured).toBe(0);
    expect(summary.body.messages.by_sender).toEqual({ visitor: 0, agent: 0, bot: 0, system: 0 });
  });

  it("another account's conversation is a 404 like a random id, and stays", async () => {
    const owner = await stack.createAccount();
    const conversation = await owner.api.post('/v1/conversations', { subject: 'Not yours' });
    for (const id of [conversation.body.id, randomUUID(), 'not-a-uuid']) {
      expectProblem(await account.api.request('DELETE', `/v1/conversations/${id}`), 404, 'not_found');
    }
    expect((await owner.api.get(`/v1/conversations/${conversation.body.id}`)).status).toBe(200);
  });
});
