import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import {
  DependencyProxies,
  eventually,
  expectLive,
  PACKAGE_VERSION,
  expectReadinessFollowsOutage,
  expectReady,
  PrometheusText,
  TestStack,
  WebhookReceiver,
} from '@app/testing';

/**
 * The webhooks service's ops server (OPS_PORT): health with its Postgres and RabbitMQ (reached
 * through TCP proxies of this file's own, so they can be cut for this service alone), and the
 * fan-out and delivery metrics after real events and real HTTP attempts against local receivers.
 */

const CHECKS = ['postgres', 'rabbitmq'];

describe('webhooks service health and metrics', () => {
  let stack: TestStack;
  let ops: string;
  let dependencies: DependencyProxies;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    dependencies = await DependencyProxies.start();
    stack = await TestStack.start({
      webhooks: {
        ...dependencies.routes(),
        // The hanging receiver's attempts time out quickly; one retry after 1 s, then failed.
        WEBHOOK_TIMEOUT_MS: '500',
        WEBHOOK_RETRY_SCHEDULE: '1',
      },
    });
    ops = stack.webhooks!.opsUrl;
  });
  afterAll(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await stack?.close();
    await dependencies?.close();
  });

  const scrape = () => PrometheusText.scrape(ops);

  async function receiver(reply: 'hang' | number): Promise<WebhookReceiver> {
    const started = await WebhookReceiver.start();
    started.answer(() => (reply === 'hang' ? 'hang' : { status: reply }));
    receivers.push(started);
    return started;
  }

  it('/health/live and /health/ready answer 200 with Postgres and RabbitMQ up', async () => {
    await expectLive(ops);
    expect((await scrape()).value('cms_build_info', { version: PACKAGE_VERSION })).toBe(1);
    const body = await expectReady(ops, CHECKS);
    expect(Object.keys(body.details).sort()).toEqual(CHECKS);
  });

  it('counts events consumed, attempts by outcome with their duration, and delivery latency of successes', async () => {
    const account = await stack.createAccount();
    const closed = await WebhookReceiver.start();
    const nobodyListens = closed.url;
    await closed.close();
    const targets = {
      success: (await receiver(200)).url,
      http_error: (await receiver(500)).url,
      timeout: (await receiver('hang')).url,
      connection_error: nobodyListens,
    };
    const start = await scrape();
    for (const url of Object.values(targets)) {
      expect((await account.api.post('/v1/webhooks', { url, events: ['conversation.started'] })).status).toBe(
        201,
      );
    }
    const before = await scrape();
    expect((await account.api.post('/v1/conversations', { subject: 'Metrics' })).status).toBe(201);

    // Two attempts each for the failing ones (the first and one retry), one for the success.
    const after = await eventually(
      async () => {
        const scraped = await scrape();
        const attempts = (outcome: string) =>
          scraped.since(before, 'cms_webhook_attempts_total', { outcome });
        expect({
          success: attempts('success'),
          http_error: attempts('http_error'),
          timeout: attempts('timeout'),
          connection_error: attempts('connection_error'),
        }).toEqual({ success: 1, http_error: 2, timeout: 2, connection_error: 2 });
        return scraped;
      },
      20_000,
      200,
    );
    expect(after.since(before, 'cms_webhook_events_consumed_total', { outcome: 'fanned_out' })).toBe(1);
    expect(after.since(before, 'cms_webhook_attempt_duration_seconds_count')).toBe(7);
    expect(after.since(before, 'cms_webhook_delivery_latency_seconds_count')).toBe(1);
    expect(
      after.since(start, 'cms_rpc_server_commands_total', { pattern: 'webhooks.create', outcome: 'ok' }),
    ).toBe(4);
    expect(after.declares('process_resident_memory_bytes')).toBe(true);
  });

  it('reports pending deliveries and how long the most overdue one has waited, read from Postgres', async () => {
    const account = await stack.createAccount();
    const hook = await account.api.post('/v1/webhooks', { url: (await receiver(200)).url, events: ['*'] });
    expect(hook.status).toBe(201);
    const pending = (scraped: PrometheusText) => scraped.value('cms_webhook_deliveries_pending')!;
    const before = await eventually(async () => {
      const scraped = await scrape();
      expect(scraped.value('cms_webhook_oldest_due_delivery_age_seconds')).toBe(0);
      return scraped;
    });
    // Due ten minutes ago and leased far ahead by a replica that never attempts it: a stuck dispatcher.
    const id = randomUUID();
    await stack.query(
      `INSERT INTO webhooks.deliveries (id, account_id, subscription_id, event_id, event_type, status, max_attempts,
                                        next_attempt_at, lease_owner, lease_until)
       VALUES ($1, $2, $3, $4, 'conversation.started', 'pending', 1, now() - interval '10 minutes', $5,
               now() + interval '1 hour')`,
      [id, account.accountId, hook.body.id, randomUUID(), randomUUID()],
    );
    try {
      const stuck = await scrape();
      expect(pending(stuck) - pending(before)).toBe(1);
      expect(stuck.value('cms_webhook_oldest_due_delivery_age_seconds')).toBeGreaterThanOrEqual(600);
    } finally {
      await stack.query(`DELETE FROM webhooks.deliveries WHERE id = $1`, [id]);
    }
    expect((await scrape()).value('cms_webhook_oldest_due_delivery_age_seconds')).toBe(0);
  });

  it('counts an invalid event as dead-lettered', async () => {
    const before = await scrape();
    const connection = await amqp.connect(process.env.AMQP_URL!);
    try {
      const channel = await connection.createConfirmChannel();
      channel.publish(
        CONVERSATIONS_EVENTS_EXCHANGE,
        'conversation.started',
        Buffer.from('{"not":"a cloudevent"}'),
      );
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }
    await eventually(async () => {
      const after = await scrape();
      expect(after.since(before, 'cms_webhook_events_consumed_total', { outcome: 'dead_lettered' })).toBe(1);
      return true;
    });
  });

  it.each(['postgres', 'rabbitmq'] as const)(
    '/health/ready answers 503 naming %s while it is unreachable, and 200 once it is back',
    (down) => expectReadinessFollowsOutage(ops, dependencies.proxies[down], down, CHECKS),
  );
});
