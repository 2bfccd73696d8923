import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import amqplib from 'amqplib';
import { type CloudEvent, CONVERSATIONS_EVENTS_STREAM } from '@app/contracts';
import { brokerUrls } from '@app/messaging';
import { eventually, sleep, TestAccount, TestStack } from '@app/testing';
import { killRabbitNode, restoreTestbed } from './test/testbed';

/**
 * On the HA testbed's three RabbitMQ nodes, the conversations service declares the stream
 * `conversations.events.stream` replicated on every node, and a consumer that connects after the
 * node leading it died still reads every event from the first, those published before and after.
 */

interface StreamRow {
  name: string;
  type: string;
  leader: string;
  members: string[];
}

function streamRow(vhost: string): StreamRow {
  const rows = JSON.parse(
    execFileSync(
      path.resolve(__dirname, 'rabbitmqctl.sh'),
      ['-q', 'list_queues', '-p', vhost, 'name', 'type', 'leader', 'members', '--formatter', 'json'],
      { encoding: 'utf8' },
    ),
  ) as StreamRow[];
  const row = rows.find((candidate) => candidate.name === CONVERSATIONS_EVENTS_STREAM);
  if (!row) throw new Error(`no ${CONVERSATIONS_EVENTS_STREAM} in ${vhost}`);
  return row;
}

/** Every event id of the account in the stream, read from the first through any node that answers. */
async function accountEventsInStream(accountId: string, expected: number): Promise<string[]> {
  for (const url of brokerUrls(process.env.AMQP_URL!)) {
    const connection = await amqplib.connect(url).catch(() => undefined);
    if (!connection) continue;
    try {
      const channel = await connection.createChannel();
      await channel.prefetch(500);
      const ids: string[] = [];
      await channel.consume(
        CONVERSATIONS_EVENTS_STREAM,
        (message) => {
          if (!message) return;
          const event = JSON.parse(message.content.toString('utf8')) as CloudEvent;
          if (event.accountid === accountId) ids.push(event.id);
          channel.ack(message);
        },
        { noAck: false, arguments: { 'x-stream-offset': 'first' } },
      );
      await eventually(() => ids.length >= expected, 30_000);
      return ids;
    } finally {
      await connection.close().catch(() => undefined);
    }
  }
  throw new Error('no RabbitMQ node answered');
}

describe('HA: the event stream', () => {
  let stack: TestStack;
  let account: TestAccount;
  const vhost = () => new URL(brokerUrls(process.env.AMQP_URL!)[0]).pathname.slice(1);

  beforeAll(async () => {
    stack = await TestStack.start();
    account = await stack.createAccount('business');
  });
  afterAll(async () => {
    await stack?.close();
    await restoreTestbed();
  });

  /** Starts `count` conversations, each retried under its Idempotency-Key until acknowledged. */
  async function startConversations(count: number): Promise<void> {
    for (let created = 0; created < count; created++) {
      const headers = { 'idempotency-key': randomUUID() };
      while (
        (await account.api.post('/v1/conversations', {}, { headers, contract: false }).catch(() => undefined))
          ?.status !== 201
      )
        await sleep(100);
    }
  }

  it('is replicated on every node and keeps every event when its leader dies', async () => {
    const declared = streamRow(decodeURIComponent(vhost()));
    expect(declared.type).toBe('stream');
    expect(declared.members).toHaveLength(3);

    await startConversations(3);
    expect(await accountEventsInStream(account.accountId, 3)).toHaveLength(3);
    killRabbitNode(declared.leader);
    await startConversations(3);
    const ids = await eventually(async () => {
      const [row] = await stack.query(
        `SELECT count(*)::int AS n FROM conversations.outbox WHERE account_id = $1 AND published_at IS NOT NULL`,
        [account.accountId],
      );
      return row.n === 6 && accountEventsInStream(account.accountId, 6);
    }, 120_000);
    expect(new Set(ids).size).toBe(6);
  });
});
