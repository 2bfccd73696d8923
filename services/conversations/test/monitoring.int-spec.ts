import { randomUUID } from 'node:crypto';
import {
  DependencyProxies,
  eventually,
  expectLive,
  PACKAGE_VERSION,
  expectNotReady,
  expectReady,
  PrometheusText,
  ServiceProcess,
  TestStack,
} from '@app/testing';

/**
 * The conversations service's ops server (OPS_PORT): /health/live, /health/ready, /metrics and
 * nothing else. Its Postgres and RabbitMQ are reached through TCP proxies of this file's own, so a
 * dependency can be made unreachable for this service alone and brought back.
 */

const CHECKS = ['postgres', 'rabbitmq'];

describe('conversations service health and metrics', () => {
  let stack: TestStack;
  let ops: string;
  let dependencies: DependencyProxies;

  beforeAll(async () => {
    dependencies = await DependencyProxies.start();
    stack = await TestStack.start({
      conversations: {
        ...dependencies.routes(),
      },
    });
    ops = stack.conversations!.opsUrl;
  });
  afterAll(async () => {
    await stack?.close();
    await dependencies?.close();
  });

  const scrape = () => PrometheusText.scrape(ops);

  /** An unpublished outbox row written straight into the table, `ageSeconds` old. */
  async function unpublishedEvent(ageSeconds: number): Promise<void> {
    const [eventId, accountId, conversationId] = [randomUUID(), randomUUID(), randomUUID()];
    const time = new Date(Date.now() - ageSeconds * 1000).toISOString();
    const envelope = {
      specversion: '1.0',
      id: eventId,
      source: '/conversations',
      type: 'conversation.started',
      time,
      subject: conversationId,
      datacontenttype: 'application/json',
      accountid: accountId,
      data: { conversation: { id: conversationId, status: 'active' } },
    };
    await stack.query(
      `INSERT INTO conversations.outbox (event_id, account_id, conversation_id, type, envelope, created_at, sequence)
       VALUES ($1, $2, $3, 'conversation.started', $4, $5, 1)`,
      [eventId, accountId, conversationId, envelope, time],
    );
  }

  it('/health/live and /health/ready answer 200 with Postgres and RabbitMQ up; nothing else is served', async () => {
    await expectLive(ops);
    expect((await scrape()).value('cms_build_info', { version: PACKAGE_VERSION })).toBe(1);
    const body = await expectReady(ops, CHECKS);
    expect(Object.keys(body.details).sort()).toEqual(CHECKS);
    expect((await fetch(`${ops}/v1/conversations`)).status).toBe(404);
    expect((await fetch(`${ops}/metrics`, { method: 'POST' })).status).toBe(404);
  });

  it('counts RPC commands by pattern and outcome, events published, and reports the outbox backlog', async () => {
    const { api } = await stack.createAccount();
    const before = await scrape();
    expect(before.declares('process_cpu_seconds_total')).toBe(true);
    expect((await api.post('/v1/conversations', { subject: 'Metrics' })).status).toBe(201);
    expect((await api.get(`/v1/conversations/${randomUUID()}`)).status).toBe(404);
    const after = await eventually(async () => {
      const scraped = await scrape();
      expect(
        scraped.since(before, 'cms_outbox_events_published_total', { type: 'conversation.started' }),
      ).toBe(1);
      return scraped;
    });
    const commands = (pattern: string, outcome: string) =>
      after.since(before, 'cms_rpc_server_commands_total', { pattern, outcome });
    expect({
      created: commands('conversations.create', 'ok'),
      missing: commands('conversations.get', 'rejected'),
    }).toEqual({
      created: 1,
      missing: 1,
    });
    expect(
      after.since(before, 'cms_rpc_server_duration_seconds_count', { pattern: 'conversations.create' }),
    ).toBe(1);
    await eventually(async () => {
      const scraped = await scrape();
      expect(scraped.value('cms_outbox_backlog_events')).toBe(0);
      expect(scraped.value('cms_outbox_oldest_unsent_age_seconds')).toBe(0);
      return true;
    });
  });

  it('RabbitMQ unreachable: 503 naming it; the backlog and the oldest event age grow, and drain once it is back', async () => {
    const before = await scrape();
    await dependencies.proxies.rabbitmq.cut();
    try {
      await expectNotReady(ops, 'rabbitmq', ['postgres']);
      await unpublishedEvent(600);
      const during = await scrape();
      expect(during.value('cms_outbox_backlog_events')).toBeGreaterThanOrEqual(1);
      expect(during.value('cms_outbox_oldest_unsent_age_seconds')).toBeGreaterThanOrEqual(600);
    } finally {
      await dependencies.proxies.rabbitmq.restore();
    }
    await expectReady(ops, CHECKS);
    await eventually(async () => {
      const after = await scrape();
      expect(after.value('cms_outbox_backlog_events')).toBe(0);
      expect(after.since(before, 'cms_outbox_events_published_total', { type: 'conversation.started' })).toBe(
        1,
      );
      return true;
    }, 20_000);
  });

  it('Postgres unreachable: 503 naming it; /metrics still answers, the backlog it cannot read being NaN', async () => {
    await dependencies.proxies.postgres.cut();
    try {
      await expectNotReady(ops, 'postgres', ['rabbitmq']);
      const during = await scrape();
      expect(during.value('cms_outbox_backlog_events')).toBeNaN();
      expect(during.value('cms_outbox_oldest_unsent_age_seconds')).toBeNaN();
      expect(during.value('cms_rpc_server_commands_total')).toBeGreaterThan(0);
    } finally {
      await dependencies.proxies.postgres.restore();
    }
    await expectReady(ops, CHECKS);
    expect((await scrape()).value('cms_outbox_backlog_events')).toBe(0);
  });

  it('as a real process: OPS_PORT serves health and metrics, and SIGTERM still stops it cleanly', async () => {
    const service = await ServiceProcess.start('conversations');
    try {
      await expectLive(service.url);
      await expectReady(service.url, CHECKS);
      expect((await PrometheusText.scrape(service.url)).declares('cms_outbox_backlog_events')).toBe(true);
    } finally {
      expect(await service.stop()).toBe(0);
    }
  });
});
