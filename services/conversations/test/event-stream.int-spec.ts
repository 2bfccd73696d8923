import amqp, { type ChannelModel } from 'amqplib';
import { type CloudEvent, CONVERSATIONS_EVENTS_STREAM } from '@app/contracts';
import {
  amqpUrlFor,
  capturedLogger,
  createVhost,
  deleteVhost,
  eventually,
  sleep,
  TestStack,
  testServices,
} from '@app/testing';

/**
 * The stream `conversations.events.stream`, declared by the conversations service at start-up and
 * bound to every event, lets a consumer that connects later read what was published before it:
 * from the first event kept, from a time, or from an offset.
 *
 * The suite runs in a vhost of its own: in the run's vhost the stream keeps everything every
 * other suite published (thousands of messages, some not even JSON, published on purpose by the
 * fan-out tests), so reading it from `first` would depend on what ran before.
 */
const VHOST = `${process.env.TEST_RUN_ID!}_event_stream`;
const AMQP_URL = amqpUrlFor(VHOST);

interface StreamMessage {
  offset: number;
  /** Undefined for a message that is not JSON: the stream keeps whatever reached the exchange. */
  event?: CloudEvent;
}

function parsed(content: Buffer): CloudEvent | undefined {
  try {
    return JSON.parse(content.toString('utf8')) as CloudEvent;
  } catch {
    return undefined;
  }
}

/** Reads the stream from `offset` until `wanted` says it has what it needs (or 15 s pass). */
async function readStream(
  connection: ChannelModel,
  offset: unknown,
  wanted: (read: StreamMessage[]) => boolean,
): Promise<StreamMessage[]> {
  const channel = await connection.createChannel();
  await channel.prefetch(500); // a stream consumer must set one, and acknowledge
  const read: StreamMessage[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`stream read ${read.length} messages, not enough`)),
        15_000,
      );
      void channel.consume(
        CONVERSATIONS_EVENTS_STREAM,
        (message) => {
          if (!message) return;
          read.push({
            offset: message.properties.headers!['x-stream-offset'] as number,
            event: parsed(message.content),
          });
          channel.ack(message);
          if (wanted(read)) {
            clearTimeout(timer);
            resolve();
          }
        },
        { noAck: false, arguments: { 'x-stream-offset': offset } },
      );
    });
  } finally {
    await channel.close().catch(() => undefined);
  }
  return read;
}

const ofAccount = (read: StreamMessage[], accountId: string) =>
  read.filter((message): message is Required<StreamMessage> => message.event?.accountid === accountId);

describe('conversations.events.stream', () => {
  let stack: TestStack;
  let connection: ChannelModel;
  beforeAll(async () => {
    createVhost(VHOST);
    stack = await TestStack.start({ gateway: { AMQP_URL }, conversations: { AMQP_URL } });
  });
  afterAll(async () => {
    await connection?.close().catch(() => undefined);
    await stack?.close();
    deleteVhost(VHOST);
  });

  /** Starts `count` conversations of a new account and returns the account id once all are published. */
  async function publishConversations(count: number): Promise<string> {
    const { accountId, api } = await stack.createAccount();
    for (let i = 0; i < count; i++) expect((await api.post('/v1/conversations', {})).status).toBe(201);
    await eventually(async () => {
      const [row] = await stack.query(
        `SELECT count(*)::int AS n FROM conversations.outbox WHERE account_id = $1 AND published_at IS NOT NULL`,
        [accountId],
      );
      if (row.n !== count) throw new Error(`${String(row.n)} of ${count} events published`);
      return true;
    });
    return accountId;
  }

  it('holds events published before a consumer connected: from the first, a time and an offset', async () => {
    const before = await publishConversations(3);
    await sleep(2100); // offsets by time have a resolution of a second, and of a chunk of writes
    const since = Math.floor(Date.now() / 1000);
    await sleep(1100);
    const after = await publishConversations(2);

    connection = await amqp.connect(AMQP_URL);
    const fromFirst = await readStream(connection, 'first', (read) => ofAccount(read, after).length === 2);
    expect(fromFirst[0].offset).toBe(0); // the stream's beginning: nothing is old enough to be dropped
    expect(ofAccount(fromFirst, before).map(({ event }) => event.type)).toEqual(
      Array(3).fill('conversation.started'),
    );
    expect(ofAccount(fromFirst, after)).toHaveLength(2);

    const fromTime = await readStream(
      connection,
      { '!': 'timestamp', value: since },
      (read) => ofAccount(read, after).length === 2,
    );
    expect(ofAccount(fromTime, before)).toEqual([]);
    expect(ofAccount(fromTime, after).map(({ event }) => event.id)).toEqual(
      ofAccount(fromFirst, after).map(({ event }) => event.id),
    );

    const second = ofAccount(fromFirst, before)[1];
    const fromOffset = await readStream(
      connection,
      second.offset,
      (read) => ofAccount(read, after).length === 2,
    );
    expect(fromOffset[0]).toEqual(second);
    expect(ofAccount(fromOffset, before).map(({ event }) => event.id)).toEqual(
      ofAccount(fromFirst, before)
        .slice(1)
        .map(({ event }) => event.id),
    );
  });

  it('a start with other retention settings keeps the stream, its history and its binding, and says so', async () => {
    const accountId = await publishConversations(1);
    await stack.stopConversations();
    const { logger, lines } = capturedLogger('warn');
    const restarted = await testServices().startConversations(
      stack.conversationsConfig({ EVENT_STREAM_MAX_AGE: '1h', EVENT_STREAM_MAX_BYTES: '5000000' }),
      logger,
    );
    try {
      const warning = lines
        .map((line) => JSON.parse(line))
        .find((line) => line.queue === CONVERSATIONS_EVENTS_STREAM);
      expect(warning?.msg).toMatch(/kept as it is/);
      connection ??= await amqp.connect(AMQP_URL);
      const later = await publishConversations(1);
      const read = await readStream(connection, 'first', (all) => ofAccount(all, later).length === 1);
      expect(ofAccount(read, accountId)).toHaveLength(1);
    } finally {
      await restarted.close();
      await stack.startConversations();
    }
  });
});
