import { randomUUID } from 'node:crypto';
import amqplib from 'amqplib';
import { CONVERSATIONS_EVENTS_EXCHANGE, CONVERSATIONS_RPC_QUEUE } from '@app/contracts';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';
import { brokerUrls, QUORUM_QUEUE_ARGUMENTS } from '@app/messaging';
import { ApiClient, eventually, sleep, TestAccount, TestStack, WebhookReceiver } from '@app/testing';
import {
  killPatroniLeader,
  killRabbitNode,
  killRedisPrimary,
  rabbitLeaderOf,
  restoreTestbed,
} from './test/testbed';

/**
 * Against the HA testbed (npm run ha:up): under a steady load of creates, messages and status
 * changes with webhook deliveries to a receiver on 127.0.0.1, one node is SIGKILLed at a time.
 * Every write is retried by its client under the same Idempotency-Key until acknowledged, as an
 * integrator would; the audit then checks the databases and a quorum queue bound to
 * `conversations.events`: nothing acknowledged lost, nothing applied twice, every event
 * published (a duplicate only with the same id) and every webhook delivered. The longest stretch
 * of failed requests of each fault is printed (BENCHMARKS.md, "High availability").
 */
const WORKERS = 4;
const BEFORE_FAULT_MS = 4000;
const AFTER_FAULT_MS = 25_000;
const AUDIT_QUEUE = 'ha.audit';

interface Acknowledged {
  conversations: Map<string, { messages: number; status: string }>;
}

interface Stretch {
  failures: number;
  longestMs: number;
  firstError?: string;
  /** Admitted without being counted by the limiter (Redis unreachable, fail mode open). */
  uncounted: number;
}

/** Workers that create a conversation, post two messages, close it, reopen it, over and over. */
class SteadyLoad {
  readonly acknowledged: Acknowledged = { conversations: new Map() };
  private stretch: Stretch = { failures: 0, longestMs: 0, uncounted: 0 };
  private failingSince?: number;
  private running = true;
  private readonly workers: Array<Promise<void>>;

  constructor(private readonly api: ApiClient) {
    this.workers = Array.from({ length: WORKERS }, () => this.work());
  }

  /** Figures since the previous call. */
  takeStretch(): Stretch {
    const stretch = this.stretch;
    this.stretch = { failures: 0, longestMs: 0, uncounted: 0 };
    return stretch;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  private async work(): Promise<void> {
    while (this.running) {
      const created = await this.send('POST', '/v1/conversations', { subject: 'HA', status: 'active' });
      if (!created) return;
      const id = created.id as string;
      const record = { messages: 0, status: 'active' };
      this.acknowledged.conversations.set(id, record);
      for (const content of ['first', 'second']) {
        if (!(await this.send('POST', `/v1/conversations/${id}/messages`, { sender: 'visitor', content })))
          return;
        record.messages += 1;
      }
      for (const status of ['closed', 'active']) {
        if (!(await this.send('PATCH', `/v1/conversations/${id}`, { status }))) return;
        record.status = status;
      }
    }
  }

  /** One write, retried under one Idempotency-Key until acknowledged; undefined once stopped. */
  private async send(method: string, path: string, body: unknown): Promise<any> {
    const key = randomUUID();
    for (;;) {
      const started = Date.now();
      try {
        const response = await this.api.request(method, path, {
          body,
          headers: { 'idempotency-key': key },
          contract: false,
        });
        if (response.status < 300) {
          if (!response.headers.get('x-ratelimit-remaining')) this.stretch.uncounted += 1;
          this.succeeded();
          return response.body;
        }
        this.failed(started, `${response.status} ${response.body?.code ?? ''}`);
      } catch (error) {
        this.failed(started, (error as Error).message);
      }
      if (!this.running) return undefined;
      await sleep(100);
    }
  }

  private succeeded(): void {
    if (this.failingSince !== undefined)
      this.stretch.longestMs = Math.max(this.stretch.longestMs, Date.now() - this.failingSince);
    this.failingSince = undefined;
  }

  private failed(at: number, reason: string): void {
    this.stretch.failures += 1;
    this.stretch.firstError ??= reason;
    this.failingSince ??= at;
  }
}

describe('HA: one node SIGKILLed at a time under steady load', () => {
  let stack: TestStack;
  let account: TestAccount;
  let receiver: WebhookReceiver;
  let load: SteadyLoad;
  const figures: Record<string, Stretch> = {};

  beforeAll(async () => {
    stack = await TestStack.start({ webhooks: true });
    account = await stack.createAccount('business');
    receiver = await WebhookReceiver.start();
    const hook = await account.api.post('/v1/webhooks', { url: receiver.url, events: ['*'] });
    expect(hook.status).toBe(201);
    // The audit's own queue: a quorum queue too, so the audit survives the faults.
    const connection = await amqplib.connect(brokerUrls(process.env.AMQP_URL!)[0]);
    const channel = await connection.createChannel();
    await channel.assertQueue(AUDIT_QUEUE, { durable: true, arguments: QUORUM_QUEUE_ARGUMENTS });
    await channel.bindQueue(AUDIT_QUEUE, CONVERSATIONS_EVENTS_EXCHANGE, '#');
    await connection.close();
    load = new SteadyLoad(account.api);
  });

  afterAll(async () => {
    await load?.stop();
    await stack?.close();
    await receiver?.close();
    console.log(
      `HA figures (longest stretch of failed requests per fault):\n${JSON.stringify(figures, null, 2)}`,
    );
  });

  async function underFault(name: string, kill: () => string): Promise<void> {
    await sleep(BEFORE_FAULT_MS);
    load.takeStretch();
    const killed = kill();
    await sleep(AFTER_FAULT_MS);
    figures[`${name} (${killed})`] = load.takeStretch();
    restoreTestbed();
  }

  it('loses nothing when the RabbitMQ node leading the queues dies', async () => {
    const leader = rabbitLeaderOf(process.env.TEST_RUN_ID!, CONVERSATIONS_RPC_QUEUE);
    await underFault('rabbitmq leader', () => (killRabbitNode(leader), leader));
  });

  it('loses nothing when the Patroni leader dies', async () => {
    await underFault('postgres leader', killPatroniLeader);
  });

  it('loses nothing when the Redis primary dies, and the limiter counts again on the promoted replica', async () => {
    await underFault('redis primary', () => String(killRedisPrimary()));
    const response = await account.api.get('/v1/conversations');
    expect(response.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('audit: every acknowledged write stored once, every event published and delivered', async () => {
    await load.stop();
    const acknowledged = [...load.acknowledged.conversations];
    expect(acknowledged.length).toBeGreaterThan(0);

    const stored = await stack.query<{ id: string; status: string; messages: number }>(
      `SELECT c.id, c.status, (SELECT count(*)::int FROM conversations.messages m WHERE m.conversation_id = c.id) AS messages
         FROM conversations.conversations c WHERE c.account_id = $1`,
      [account.accountId],
    );
    const byId = new Map(stored.map((row) => [row.id, row]));
    const lost = acknowledged.filter(([id]) => !byId.has(id));
    // A write acknowledged after retries is applied once: the message count is never above the
    // acknowledged one (an unacknowledged last attempt may have landed: at most one more).
    const doubled = acknowledged.filter(
      ([id, record]) => (byId.get(id)?.messages ?? 0) > record.messages + 1,
    );
    expect({ lost, doubled }).toEqual({ lost: [], doubled: [] });

    // Every event the outbox holds reaches the bound queue and, if public, the receiver.
    await eventually(async () => {
      const [{ pending }] = await stack.query(
        `SELECT count(*)::int AS pending FROM conversations.outbox WHERE account_id = $1 AND published_at IS NULL`,
        [account.accountId],
      );
      return pending === 0 || undefined;
    }, 60_000);
    const outbox = await stack.query<{ event_id: string; type: string }>(
      `SELECT event_id, type FROM conversations.outbox WHERE account_id = $1`,
      [account.accountId],
    );
    const published = await drainAudit();
    const copies = new Map<string, number>();
    for (const id of published) copies.set(id, (copies.get(id) ?? 0) + 1);
    const eventsLost = outbox.filter((event) => !copies.has(event.event_id)).length;
    const duplicates = [...copies.values()].filter((count) => count > 1).length;
    const isPublic = (type: string) => (PUBLIC_EVENT_TYPES as readonly string[]).includes(type);
    const expected = new Set(outbox.filter((event) => isPublic(event.type)).map((event) => event.event_id));
    const undelivered = await eventually(() => {
      const delivered = new Set(receiver.received.map((request) => String(request.headers['webhook-id'])));
      const missing = [...expected].filter((id) => !delivered.has(id));
      return missing.length === 0 ? missing : undefined;
    }, 120_000).catch(() => [...expected]);
    console.log(
      JSON.stringify({ conversations: acknowledged.length, events: outbox.length, eventsLost, duplicates }),
    );
    expect({ eventsLost, undelivered: undelivered.length }).toEqual({ eventsLost: 0, undelivered: 0 });
  });
});

/** Every event id the audit queue received (copies included). */
async function drainAudit(): Promise<string[]> {
  const connection = await amqplib.connect(brokerUrls(process.env.AMQP_URL!)[0]);
  const channel = await connection.createChannel();
  const ids: string[] = [];
  for (let message = await channel.get(AUDIT_QUEUE, { noAck: true }); message;) {
    ids.push(JSON.parse(message.content.toString()).id);
    message = await channel.get(AUDIT_QUEUE, { noAck: true });
  }
  await connection.close();
  return ids;
}
