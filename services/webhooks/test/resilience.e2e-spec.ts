import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { CLOUDEVENTS_SOURCE, CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import { eventually, ServiceProcess, TcpProxy, TestAccount, TestStack, WebhookReceiver } from '@app/testing';

/**
 * Nothing is lost (at least once end to end, docs/webhooks.md) when the webhooks service is
 * killed mid-delivery or RabbitMQ drops every connection, and replicas share the work without
 * sending anything twice. The webhooks service runs as real processes; the gateway and the
 * conversations service in this one. Every service reaches RabbitMQ through a TCP proxy of this
 * file's own, so the broker can be made unreachable for them alone: the machine's RabbitMQ node
 * is never restarted (other tests and programs use it).
 */

const WEBHOOKS_ENV = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '1,1,1',
  WEBHOOK_POLL_MS: '100',
  // A killed replica's claims lapse after 3 s.
  WEBHOOK_LEASE_SECONDS: '3',
  LOG_LEVEL: 'debug',
};

describe('webhooks: crashes, broker outages and replicas', () => {
  let broker: TcpProxy;
  let stack: TestStack;
  const processes: ServiceProcess[] = [];
  const receivers: WebhookReceiver[] = [];
  const secrets: string[] = [];

  /** The webhooks replica every test starts from (tests replace it when they kill it). */
  let running: ServiceProcess;

  beforeAll(async () => {
    broker = await TcpProxy.for(process.env.AMQP_URL!);
    const AMQP_URL = broker.route(process.env.AMQP_URL!);
    stack = await TestStack.start({ gateway: { AMQP_URL }, conversations: { AMQP_URL } });
    running = await startWebhooks();
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await Promise.all(receivers.map((r) => r.close()));
    await stack?.close();
    await broker?.close();
  });

  async function startWebhooks(): Promise<ServiceProcess> {
    const started = await ServiceProcess.start('webhooks', {
      ...WEBHOOKS_ENV,
      AMQP_URL: broker.route(process.env.AMQP_URL!),
    });
    processes.push(started);
    return started;
  }

  async function subscribe(account: TestAccount, receiver: WebhookReceiver) {
    const created = await eventually(
      async () => {
        const response = await account.api.post('/v1/webhooks', {
          url: receiver.url,
          events: ['conversation.started'],
        });
        return response.status === 201 && response.body;
      },
      10_000,
      100,
    );
    secrets.push(created.secret);
    return created as { id: string; secret: string };
  }

  /** conversation.started event ids the conversations service recorded for the account. */
  async function startedEventIds(accountId: string): Promise<string[]> {
    const rows = await stack.query<{ event_id: string }>(
      `SELECT event_id FROM conversations.outbox WHERE account_id = $1 AND type = 'conversation.started'`,
      [accountId],
    );
    return rows.map((row) => row.event_id);
  }

  async function allSucceeded(subscriptionId: string, expected: number): Promise<boolean> {
    const [row] = await stack.query(
      `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok, count(*)::int AS n FROM webhooks.deliveries WHERE subscription_id = $1`,
      [subscriptionId],
    );
    return row.n === expected && row.ok === expected;
  }

  const distinctIds = (receiver: WebhookReceiver) =>
    new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));

  it('killed while deliveries are in flight and started again: every delivery completes, no event is lost', async () => {
    const account = await stack.createAccount();
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.answer({ status: 200, delayMs: 150 });
    const hook = await subscribe(account, receiver);

    for (let i = 0; i < 40; i++) expect((await account.api.post('/v1/conversations', {})).status).toBe(201);
    await receiver.waitFor(10);
    await running.kill();
    // What the killed replica had not recorded as delivered (in flight, or answered but its
    // completion not yet written) is all that may be sent again.
    const unrecorded = new Set(
      (
        await stack.query<{ event_id: string }>(
          `SELECT event_id FROM webhooks.deliveries WHERE subscription_id = $1 AND status <> 'succeeded'`,
          [hook.id],
        )
      ).map((row) => row.event_id),
    );
    // Events keep coming while no webhooks service runs: they wait in its durable queue.
    for (let i = 0; i < 20; i++) expect((await account.api.post('/v1/conversations', {})).status).toBe(201);
    running = await startWebhooks();

    const expected = await startedEventIds(account.accountId);
    expect(expected).toHaveLength(60);
    await eventually(() => expected.every((id) => distinctIds(receiver).has(id)), 30_000, 200);
    await eventually(() => allSucceeded(hook.id, 60), 10_000, 200);
    expect(distinctIds(receiver).size).toBe(60);
    // A repeat carries the same webhook-id (receivers dedupe by it), and only for unrecorded ones.
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    const repeated = new Set(ids.filter((id, index) => ids.indexOf(id) !== index));
    expect([...repeated].filter((id) => !unrecorded.has(id))).toEqual([]);
  });

  const rabbitmqctl = (...args: string[]) =>
    execFileSync('rabbitmqctl', ['-q', ...args], { stdio: 'ignore' });
  const brokerOutages: [string, () => Promise<void>][] = [
    [
      // Closed by the broker itself: this run's vhost only.
      'drops every connection',
      async () => {
        rabbitmqctl(
          'close_all_connections',
          '-p',
          process.env.TEST_RUN_ID!,
          'test: broker connections dropped',
        );
      },
    ],
    [
      // Every connection cut and new ones refused for a while, as when the node is down.
      'is unreachable for three seconds',
      async () => {
        await broker.cut();
        await new Promise((resolve) => setTimeout(resolve, 3000));
        await broker.restore();
      },
    ],
  ];

  it.each(brokerOutages)(
    'RabbitMQ %s while events flow: the relay and the consumers reconnect, nothing is lost',
    async (_outage, interruptBroker) => {
      const account = await stack.createAccount();
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      const hook = await subscribe(account, receiver);

      let writing = true;
      const writer = (async () => {
        while (writing) {
          // Requests during the outage fail (503/504 or a reset); what matters is what was committed.
          await account.api.post('/v1/conversations', {}).catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      })();
      await receiver.waitFor(20);
      await interruptBroker();
      // Writes succeed again once the gateway and the conversations service have reconnected.
      const before = receiver.received.length;
      await eventually(
        async () => (await account.api.post('/v1/conversations', {})).status === 201,
        30_000,
        200,
      );
      await receiver.waitFor(before + 20, () => true, 30_000);
      writing = false;
      await writer;

      // Every conversation that exists (whatever its request was answered) had its event delivered.
      const expected = await startedEventIds(account.accountId);
      expect(expected.length).toBeGreaterThan(40);
      await eventually(() => expected.every((id) => distinctIds(receiver).has(id)), 30_000, 200);
      await eventually(() => allSucceeded(hook.id, expected.length), 10_000, 200);
    },
  );

  it('two replicas share 500 events: each delivered exactly once', async () => {
    const replicas = [running, await startWebhooks()];
    const account = await stack.createAccount();
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    const hook = await subscribe(account, receiver);

    const connection = await amqp.connect(process.env.AMQP_URL!);
    const channel = await connection.createConfirmChannel();
    const ids: string[] = [];
    for (let i = 0; i < 500; i++) {
      const id = randomUUID();
      ids.push(id);
      const event = {
        specversion: '1.0',
        id,
        source: CLOUDEVENTS_SOURCE,
        type: 'conversation.started',
        time: new Date().toISOString(),
        subject: randomUUID(),
        datacontenttype: 'application/json',
        accountid: account.accountId,
        data: { conversation: { id: randomUUID(), status: 'active', n: i } },
      };
      channel.publish(CONVERSATIONS_EVENTS_EXCHANGE, event.type, Buffer.from(JSON.stringify(event)), {
        persistent: true,
      });
    }
    await channel.waitForConfirms();
    await connection.close();

    await eventually(() => allSucceeded(hook.id, 500), 30_000, 200);
    expect(receiver.received).toHaveLength(500);
    expect(distinctIds(receiver)).toEqual(new Set(ids));
    // Both replicas sent some of them.
    for (const replica of replicas)
      expect(replica.logs.match(/"msg":"webhook attempt"/g)?.length ?? 0).toBeGreaterThan(0);
  });

  it('secrets never appear in the logs, and a replica stops gracefully', async () => {
    expect(secrets.length).toBeGreaterThan(0);
    for (const service of processes) {
      for (const secret of secrets) {
        expect(service.logs).not.toContain(secret);
        expect(service.logs).not.toContain(secret.slice('whsec_'.length));
      }
    }
    expect(await running.stop()).toBe(0);
  });
});
