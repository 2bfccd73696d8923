import { randomUUID } from 'node:crypto';
import amqp, { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { CONVERSATIONS_RPC_QUEUE } from '@app/contracts';
import {
  ApiClient,
  ApiResponse,
  eventually,
  expectProblem,
  expectQueueState,
  queueState,
  rabbitmqctl,
  TestAccount,
  TestStack,
  timed,
} from '@app/testing';

/**
 * The gateway when the conversations service is not there (RpcClient): no
 * consumer on the RPC queue is a prompt 503 `service_unavailable`, a consumer that never answers
 * is a 504 `upstream_timeout` after RPC_TIMEOUT_MS, and the same gateway recovers by itself when
 * the service is back. A command the gateway gave up on is never executed afterwards.
 */

const RPC_TIMEOUT_MS = 1500;
/** "Promptly": a 503 must not wait for anything like the RPC timeout. */
const PROMPT_MS = 500;
/** Slack for a 504 beyond the timeout (event loop, HTTP, problem rendering). */
const TIMEOUT_MARGIN_MS = 750;

/** Waits until the real service has consumed and acknowledged everything in the RPC queue. */
function rpcQueueDrained(): Promise<void> {
  return expectQueueState(CONVERSATIONS_RPC_QUEUE, { ready: 0, unacked: 0, consumers: 1 });
}

/** Stands in for a hung conversations replica: takes commands off the queue and never answers. */
class SilentConsumer {
  readonly held: ConsumeMessage[] = [];

  private constructor(
    private readonly connection: ChannelModel,
    readonly channel: Channel,
  ) {}

  static async start(prefetch: number): Promise<SilentConsumer> {
    const connection = await amqp.connect(process.env.AMQP_URL!);
    const channel = await connection.createChannel();
    await channel.prefetch(prefetch);
    const consumer = new SilentConsumer(connection, channel);
    await channel.consume(CONVERSATIONS_RPC_QUEUE, (message) => message && consumer.held.push(message), {
      noAck: false,
    });
    return consumer;
  }

  /** Closing without acknowledging gives every held command back to the broker, as a crash would. */
  async crash(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}

describe('gateway RPC availability', () => {
  let stack: TestStack;
  let account: TestAccount;
  let api: ApiClient;
  let conversationId: string;

  beforeAll(async () => {
    stack = await TestStack.start({ gateway: { RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS) } });
    account = await stack.createAccount();
    api = account.api;
    const created = await api.post('/v1/conversations', { subject: 'before the outage' });
    expect(created.status).toBe(201);
    conversationId = created.body.id;
  });
  afterAll(async () => {
    await stack?.close();
  });
  afterEach(async () => {
    if (!stack.conversations) await stack.startConversations();
  });

  const subjectsStored = async (subjects: string[]) =>
    (
      await stack.query(
        `SELECT subject FROM conversations.conversations WHERE account_id = $1 AND subject = ANY($2)`,
        [account.accountId, subjects],
      )
    ).map((row) => row.subject);

  /** One of each operation: reads and writes. */
  const operations = (subject: string): Array<[string, () => Promise<ApiResponse>]> => [
    ['list', () => api.get('/v1/conversations')],
    ['get', () => api.get(`/v1/conversations/${conversationId}`)],
    ['create', () => api.post('/v1/conversations', { subject })],
    [
      'send message',
      () => api.post(`/v1/conversations/${conversationId}/messages`, { content: subject, sender: 'agent' }),
    ],
    ['change status', () => api.patch(`/v1/conversations/${conversationId}`, { status: 'pending' })],
    [
      'capture lead',
      () => api.post(`/v1/conversations/${conversationId}/lead`, { email: 'lead@example.com' }),
    ],
  ];

  it('the first request right after the service stops is already a prompt 503, not a 504 after the timeout', async () => {
    // A successful call just before the outage: whatever the gateway caches about the queue is fresh.
    expect((await api.get('/v1/conversations')).status).toBe(200);
    await stack.stopConversations();
    const subject = `right after the stop ${randomUUID()}`;
    const read = await timed(api.get('/v1/conversations'));
    const write = await timed(api.post('/v1/conversations', { subject }));
    expect(
      [read, write].map((r) => ({ status: r.status, code: r.body?.code, prompt: r.elapsedMs < PROMPT_MS })),
    ).toEqual([
      { status: 503, code: 'service_unavailable', prompt: true },
      { status: 503, code: 'service_unavailable', prompt: true },
    ]);

    await stack.startConversations();
    await eventually(async () => (await api.get('/v1/conversations')).status === 200);
    await rpcQueueDrained();
    expect(await subjectsStored([subject])).toEqual([]);
  });

  it('while the service is stopped, every read and write is a prompt 503 service_unavailable and nothing is applied later', async () => {
    await stack.stopConversations();
    // However long the gateway needs to notice, it must then answer 503 promptly.
    await eventually(async () => {
      const response = await timed(api.get('/v1/conversations'));
      return response.status === 503 && response.elapsedMs < PROMPT_MS;
    }, 15_000);

    const subject = `during outage ${randomUUID()}`;
    for (const [name, call] of operations(subject)) {
      const response = await timed(call());
      expect({ name, status: response.status, code: response.body?.code }).toEqual({
        name,
        status: 503,
        code: 'service_unavailable',
      });
      expectProblem(response, 503, 'service_unavailable');
      expect({ name, prompt: response.elapsedMs < PROMPT_MS }).toEqual({ name, prompt: true });
    }
    // Other routes still work without the service.
    expect((await api.get('/health/live')).status).toBe(200);

    await stack.startConversations();
    const after = await eventually(async () => {
      const response = await api.post('/v1/conversations', { subject: `after ${randomUUID()}` });
      if (response.status !== 201) throw new Error(`still ${response.status}`);
      return response;
    });
    expect(after.body.id).toBeDefined();
    await rpcQueueDrained();
    // Nothing from the outage was applied afterwards.
    expect(await subjectsStored([subject])).toEqual([]);
    const [row] = await stack.query(
      `SELECT status, message_count FROM conversations.conversations WHERE id = $1`,
      [conversationId],
    );
    expect(row).toEqual({ status: 'active', message_count: 0 });
    const leads = await stack.query(`SELECT id FROM conversations.leads WHERE conversation_id = $1`, [
      conversationId,
    ]);
    expect(leads).toEqual([]);
  });

  it('after the service comes back, the same gateway (not restarted) serves reads and writes again', async () => {
    await stack.stopConversations();
    await eventually(
      async () => (await api.get(`/v1/conversations/${conversationId}`)).status === 503,
      15_000,
    );
    await stack.startConversations();

    const read = await eventually(async () => {
      const response = await api.get(`/v1/conversations/${conversationId}`);
      if (response.status !== 200) throw new Error(`still ${response.status}`);
      return response;
    });
    expect(read.body.id).toBe(conversationId);
    const list = await api.get('/v1/conversations');
    expect(list.status).toBe(200);
    const created = await api.post('/v1/conversations', { subject: 'back' });
    expect(created.status).toBe(201);
    const message = await api.post(`/v1/conversations/${conversationId}/messages`, {
      content: 'hello again',
      sender: 'visitor',
    });
    expect(message.status).toBe(201);
    const pending = await api.patch(`/v1/conversations/${conversationId}`, { status: 'pending' });
    expect(pending.status).toBe(200);
    const active = await api.patch(`/v1/conversations/${conversationId}`, { status: 'active' });
    expect(active.status).toBe(200);
  });

  it('survives several stop/start cycles without restarting the gateway', async () => {
    for (let cycle = 0; cycle < 2; cycle++) {
      await stack.stopConversations();
      await eventually(async () => {
        const response = await timed(api.get('/v1/conversations'));
        return response.status === 503 && response.elapsedMs < PROMPT_MS;
      }, 15_000);
      await stack.startConversations();
      await eventually(async () => (await api.get('/v1/conversations')).status === 200);
    }
  });

  it('a consumer that never replies gives 504 upstream_timeout within RPC_TIMEOUT_MS; the timed-out commands are never executed later', async () => {
    await stack.stopConversations();
    const silent = await SilentConsumer.start(1);
    const subjects = [`held by a hung consumer ${randomUUID()}`, `waiting in the queue ${randomUUID()}`];
    try {
      // The gateway notices the new consumer within its consumer-check interval.
      const probe = await eventually(async () => {
        const response = await timed(api.get('/v1/conversations'));
        if (response.status !== 504) throw new Error(`got ${response.status}, not yet 504`);
        return response;
      }, 15_000);
      expectProblem(probe, 504, 'upstream_timeout');
      expect(probe.elapsedMs).toBeGreaterThanOrEqual(RPC_TIMEOUT_MS - 50);
      expect(probe.elapsedMs).toBeLessThan(RPC_TIMEOUT_MS + TIMEOUT_MARGIN_MS);
      expect(silent.held).toHaveLength(1);
      silent.channel.ack(silent.held.shift()!); // a read: let it go, freeing the consumer's one slot

      // This create is delivered to the hung consumer and held unacknowledged ...
      const held = await timed(api.post('/v1/conversations', { subject: subjects[0] }));
      expectProblem(held, 504, 'upstream_timeout');
      expect(held.elapsedMs).toBeLessThan(RPC_TIMEOUT_MS + TIMEOUT_MARGIN_MS);
      expect(silent.held).toHaveLength(1);
      expect(JSON.parse(silent.held[0].content.toString()).data.subject).toBe(subjects[0]);
      // ... and this one waits behind it in the queue.
      const queued = await timed(api.post('/v1/conversations', { subject: subjects[1] }));
      expectProblem(queued, 504, 'upstream_timeout');
      expect(queued.elapsedMs).toBeLessThan(RPC_TIMEOUT_MS + TIMEOUT_MARGIN_MS);
      // A write to an existing conversation, too.
      const message = await timed(
        api.post(`/v1/conversations/${conversationId}/messages`, { content: subjects[1], sender: 'agent' }),
      );
      expectProblem(message, 504, 'upstream_timeout');
    } finally {
      // The hung replica dies: its held command goes back to the queue, redelivered.
      await silent.crash();
      await stack.startConversations();
    }

    const after = await eventually(async () => {
      const response = await api.post('/v1/conversations', { subject: `after ${randomUUID()}` });
      if (response.status !== 201) throw new Error(`still ${response.status}`);
      return response;
    });
    expect(after.body.id).toBeDefined();
    await rpcQueueDrained();
    expect(await subjectsStored(subjects)).toEqual([]);
    const messages = await stack.query(
      `SELECT content FROM conversations.messages WHERE conversation_id = $1 AND content = $2`,
      [conversationId, subjects[1]],
    );
    expect(messages).toEqual([]);
  });

  it('a slow service: the reply that arrives after the 504 is dropped, and the gateway keeps serving', async () => {
    await stack.stopConversations();
    const silent = await SilentConsumer.start(10);
    try {
      const late = await eventually(async () => {
        const response = await api.get(`/v1/conversations/${conversationId}`);
        if (response.status !== 504) throw new Error(`got ${response.status}, not yet 504`);
        return response;
      }, 15_000);
      expectProblem(late, 504, 'upstream_timeout');
      // Answer the held request now, after the gateway has given up on it.
      const request = silent.held[silent.held.length - 1];
      silent.channel.sendToQueue(
        request.properties.replyTo,
        Buffer.from(JSON.stringify({ ok: true, data: { bogus: true } })),
        { correlationId: request.properties.correlationId },
      );
      for (const message of silent.held.splice(0)) silent.channel.ack(message);
    } finally {
      await silent.crash();
      await stack.startConversations();
    }
    const read = await eventually(async () => {
      const response = await api.get(`/v1/conversations/${conversationId}`);
      if (response.status !== 200) throw new Error(`still ${response.status}`);
      return response;
    });
    expect(read.body).toMatchObject({ id: conversationId });
    expect(read.body).not.toHaveProperty('bogus');
  });

  it('the RPC queue deleted behind both services: they declare it and consume from it again by themselves', async () => {
    expect((await api.get('/v1/conversations')).status).toBe(200);
    rabbitmqctl('delete_queue', CONVERSATIONS_RPC_QUEUE);
    // The broker cancels the service's consumer, and the gateway's next look at the queue is a
    // channel error: both channels are opened and set up again, the queue and consumer with them.
    await eventually(async () => (await api.get('/v1/conversations')).status === 200, 15_000, 250);
    const subject = `after the queue came back ${randomUUID()}`;
    expect((await api.post('/v1/conversations', { subject })).status).toBe(201);
    expect(await subjectsStored([subject])).toEqual([subject]);
    expect(queueState(CONVERSATIONS_RPC_QUEUE).consumers).toBe(1);
  });
});
