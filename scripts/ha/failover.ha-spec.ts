import { randomUUID } from 'node:crypto';
import amqplib from 'amqplib';
import { CONVERSATIONS_EVENTS_EXCHANGE, CONVERSATIONS_RPC_QUEUE } from '@app/contracts';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';
import { brokerUrls, QUORUM_QUEUE_ARGUMENTS } from '@app/messaging';
import {
  ApiClient,
  eventually,
  ServiceProcess,
  sleep,
  TestAccount,
  TestStack,
  WebhookReceiver,
} from '@app/testing';
import {
  killPatroniLeader,
  killRabbitNode,
  killRedisPrimary,
  rabbitLeaderOf,
  redisRoles,
  RESTORE_TIMEOUT_MS,
  restoreTestbed,
} from './test/testbed';

/**
 * Against the HA testbed (npm run ha:up): under a steady load of creates, messages and status
 * changes with webhook deliveries to a receiver on 127.0.0.1, one node is SIGKILLed at a time.
 * Every write is retried by its client under the same Idempotency-Key until acknowledged, as an
 * integrator would; the audit then checks the databases and a quorum queue bound to
 * `conversations.events`: nothing acknowledged lost, nothing applied twice, every event
 * published (a duplicate only with the same id) and every webhook delivered. The failed requests,
 * longest stretch of failures and p99 latency of each fault are printed (BENCHMARKS.md, "High
 * availability"). The Patroni leader is killed HA_KILLS times (default 2), each kill followed by
 * the audit of the acknowledged writes.
 *
 * The gateway runs with the product's RPC_TIMEOUT_MS unless HA_RPC_TIMEOUT_MS sets another. A
 * fault's window lasts until every request that could have been caught in it has had its answer
 * (RPC_TIMEOUT_MS after the kill) and the load has run without a failure for a while since.
 */
const WORKERS = 4;
/** Load before a fault, after the previous fault's restore. */
const BEFORE_FAULT_MS = 2000;
/** A fault's window ends once no request failed for this long (and RPC_TIMEOUT_MS passed)... */
const QUIET_AFTER_FAULT_MS = 2000;
/** ...or, at the latest, this long after the kill. */
const MAX_AFTER_FAULT_MS = 30_000;
const AUDIT_QUEUE = 'ha.audit';
const PATRONI_KILLS = Number(process.env.HA_KILLS ?? 2);
/** A service compiled from source on a loaded machine. */
const REPLICA_START_MS = 120_000;
/** Failed requests listed one by one per fault (when, how long, why). */
const FAILURES_LISTED = 20;

interface Acknowledged {
  conversations: Map<string, { messages: number; status: string }>;
}

/** A failed request: when it started after the kill, how long it took, its answer. */
interface Failure {
  startedMs: number;
  tookMs: number;
  reason: string;
}

interface Stretch {
  /** When the stretch began (the kill). */
  since: number;
  failures: number;
  failed: Failure[];
  longestMs: number;
  firstError?: string;
  /** Admitted without being counted by the limiter (Redis unreachable, fail mode open). */
  uncounted: number;
  /** Every request's time, failed ones included. */
  latenciesMs: number[];
}

/** A fault's figures: the stretch with its p99 instead of every latency. */
type Figures = Omit<Stretch, 'latenciesMs' | 'since'> & { requests: number; p99Ms: number; windowMs: number };

const newStretch = (): Stretch => ({
  since: Date.now(),
  failures: 0,
  failed: [],
  longestMs: 0,
  uncounted: 0,
  latenciesMs: [],
});

function figuresOf({ latenciesMs, since, ...stretch }: Stretch): Figures {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const p99Ms =
    sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
  return { ...stretch, requests: sorted.length, p99Ms: Math.round(p99Ms), windowMs: Date.now() - since };
}

/** Workers that create a conversation, post two messages, close it, reopen it, over and over. */
class SteadyLoad {
  readonly acknowledged: Acknowledged = { conversations: new Map() };
  private stretch: Stretch = newStretch();
  private failingSince?: number;
  private lastFailure = 0;
  /** Requests under way, by the time they started. */
  private readonly inFlight = new Set<{ started: number }>();
  private running = true;
  private readonly workers: Array<Promise<void>>;

  constructor(private readonly api: ApiClient) {
    this.workers = Array.from({ length: WORKERS }, () => this.work());
  }

  /** Figures since the previous call. */
  takeFigures(): Figures {
    const stretch = this.stretch;
    this.stretch = newStretch();
    return figuresOf(stretch);
  }

  /**
   * Resolves once the fault's window can close: `minimumMs` after its start, every request that
   * was under way by then answered, and no failure for QUIET_AFTER_FAULT_MS; at the latest
   * MAX_AFTER_FAULT_MS after the start.
   */
  async settled(minimumMs: number): Promise<void> {
    const since = this.stretch.since;
    const end = since + MAX_AFTER_FAULT_MS;
    await sleep(minimumMs);
    const cutoff = Date.now();
    while (Date.now() < end) {
      const oldest = Math.min(Infinity, ...[...this.inFlight].map((request) => request.started));
      if (oldest >= cutoff && Date.now() - this.lastFailure >= QUIET_AFTER_FAULT_MS) return;
      await sleep(100);
    }
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
      const request = { started };
      this.inFlight.add(request);
      try {
        const response = await this.api.request(method, path, {
          body,
          headers: { 'idempotency-key': key },
          contract: false,
        });
        this.stretch.latenciesMs.push(Date.now() - started);
        if (response.status < 300) {
          if (!response.headers.get('x-ratelimit-remaining')) this.stretch.uncounted += 1;
          this.succeeded();
          return response.body;
        }
        this.failed(started, `${response.status} ${response.body?.code ?? ''}`);
      } catch (error) {
        this.stretch.latenciesMs.push(Date.now() - started);
        this.failed(started, (error as Error).message);
      } finally {
        this.inFlight.delete(request);
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
    this.lastFailure = Date.now();
    this.stretch.failures += 1;
    if (this.stretch.failed.length < FAILURES_LISTED)
      this.stretch.failed.push({ startedMs: at - this.stretch.since, tookMs: Date.now() - at, reason });
    this.stretch.firstError ??= reason;
    this.failingSince ??= at;
  }
}

describe('HA: one node SIGKILLed at a time under steady load', () => {
  let stack: TestStack;
  let account: TestAccount;
  let receiver: WebhookReceiver;
  let load: SteadyLoad;
  /** A second conversations replica, as a process of its own, for the replica fault. */
  let replica: ServiceProcess | undefined;
  const figures: Record<string, Figures> = {};
  /** Seconds each phase took (BENCHMARKS.md, "High availability": the suite's duration). */
  const phases: Record<string, number> = {};
  let rpcTimeoutMs: number;

  async function timed<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await work();
    } finally {
      phases[phase] = Math.round((Date.now() - started) / 100) / 10;
    }
  }

  beforeAll(async () => {
    // The in-process services and the replica's process start side by side.
    [stack, replica] = await timed('start services', () =>
      Promise.all([
        TestStack.start({
          webhooks: true,
          gateway: process.env.HA_RPC_TIMEOUT_MS ? { RPC_TIMEOUT_MS: process.env.HA_RPC_TIMEOUT_MS } : {},
        }),
        ServiceProcess.start('conversations', {}, REPLICA_START_MS),
      ]),
    );
    rpcTimeoutMs = stack.gatewayConfig().RPC_TIMEOUT_MS;
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
    // Why the replica answered 503 (its log's warnings), by operation, cause and the first
    // frames of our code on the stack that met it.
    const outages: Record<string, number> = {};
    for (const line of replica?.logs.split('\n') ?? []) {
      if (!line.includes('"database unavailable"')) continue;
      let entry: { pattern?: string; err?: { message?: string; stack?: string } };
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // the first line of the kept tail may be cut
      }
      const frames = (entry.err?.stack ?? '')
        .split('\n')
        .filter((frame) => /\/(services|libs)\//.test(frame))
        .slice(0, 3)
        .map((frame) => frame.trim().replace(/^at /, ''));
      const cause = `${entry.pattern}: ${entry.err?.message} [${frames.join(' < ')}]`;
      outages[cause] = (outages[cause] ?? 0) + 1;
    }
    console.log(`conversations replica's 503s by cause: ${JSON.stringify(outages, null, 2)}`);
    await replica?.kill();
    await stack?.close();
    await receiver?.close();
    console.log(
      `HA figures per fault (RPC_TIMEOUT_MS ${rpcTimeoutMs}):\n${JSON.stringify(figures, null, 2)}\n` +
        `seconds per phase: ${JSON.stringify(phases)}`,
    );
  });

  async function underFault(name: string, kill: () => string | Promise<string>): Promise<Figures> {
    await sleep(BEFORE_FAULT_MS);
    load.takeFigures();
    const killed = await kill();
    // Every request caught in the fault has its answer by RPC_TIMEOUT_MS after the kill.
    await timed(`${name}: window`, () => load.settled(rpcTimeoutMs + 500));
    const fault = load.takeFigures();
    figures[`${name} (${killed})`] = fault;
    await timed(`${name}: restore`, restoreTestbed);
    return fault;
  }

  /** Every acknowledged write is stored, none twice (the last unacknowledged attempt may have landed). */
  async function acknowledgedWritesStored(): Promise<void> {
    const acknowledged = [...load.acknowledged.conversations];
    expect(acknowledged.length).toBeGreaterThan(0);
    const stored = await stack.query<{ id: string; status: string; messages: number }>(
      `SELECT c.id, c.status, (SELECT count(*)::int FROM conversations.messages m WHERE m.conversation_id = c.id) AS messages
         FROM conversations.conversations c WHERE c.account_id = $1`,
      [account.accountId],
    );
    const byId = new Map(stored.map((row) => [row.id, row]));
    const lost = acknowledged
      .filter(([id, record]) => !byId.has(id) || byId.get(id)!.messages < record.messages)
      .map(([id]) => id);
    const doubled = acknowledged
      .filter(([id, record]) => (byId.get(id)?.messages ?? 0) > record.messages + 1)
      .map(([id]) => id);
    expect({ lost, doubled }).toEqual({ lost: [], doubled: [] });
  }

  it('loses nothing when the RabbitMQ node leading the queues dies', async () => {
    const leader = await rabbitLeaderOf(process.env.TEST_RUN_ID!, CONVERSATIONS_RPC_QUEUE);
    await underFault('rabbitmq leader', () => (killRabbitNode(leader), leader));
  });

  it('loses nothing when a conversations replica is SIGKILLed mid-command', async () => {
    await underFault('conversations replica', async () => {
      await replica!.kill();
      return 'SIGKILL';
    });
    replica = await timed('replica restart', () =>
      ServiceProcess.start('conversations', {}, REPLICA_START_MS),
    );
  });

  it(
    `loses no acknowledged write when the Patroni leader dies, ${PATRONI_KILLS} times`,
    async () => {
      for (let kill = 1; kill <= PATRONI_KILLS; kill++) {
        await underFault(`postgres leader, kill ${kill}`, killPatroniLeader);
        await acknowledgedWritesStored();
      }
    },
    PATRONI_KILLS * (BEFORE_FAULT_MS + MAX_AFTER_FAULT_MS + RESTORE_TIMEOUT_MS),
  );

  it('loses nothing when the Redis primary dies, and the limiter counts again on the promoted replica', async () => {
    await underFault('redis primary', async () => String(await killRedisPrimary()));
    await eventually(
      async () => {
        const response = await account.api.get('/v1/conversations');
        return /^\d+$/.test(response.headers.get('x-ratelimit-remaining') ?? '') || undefined;
      },
      30_000,
      500,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the limiter does not count again. Redis now:\n${redisRoles()}`);
    });
  });

  it('audit: every acknowledged write stored once, every event published and delivered', async () => {
    await load.stop();
    await acknowledgedWritesStored();

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
      JSON.stringify({
        conversations: load.acknowledged.conversations.size,
        events: outbox.length,
        eventsLost,
        duplicates,
      }),
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
