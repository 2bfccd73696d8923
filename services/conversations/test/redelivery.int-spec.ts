import { randomUUID } from 'node:crypto';
import type { GetMessage } from 'amqplib';
import {
  CONVERSATIONS_RPC_DEAD_LETTER_QUEUE,
  CONVERSATIONS_RPC_QUEUE,
  ConversationRpc,
  RpcRequest,
} from '@app/contracts';
import { DIRECT_REPLY_QUEUE } from '@app/messaging';
import { eventually, expectQueueState, RpcProbeReply, rpcRequest, useRpcProbeStack } from '@app/testing';

/**
 * The conversations service's RPC queue, driven directly with amqplib as any publisher could
 * (docs/architecture.md, "Applied once"): commands are applied once per commandId however often they arrive,
 * redelivered or concurrently; poison messages are dead-lettered instead of looping or blocking;
 * unknown patterns and bad payloads get error replies and are acknowledged.
 */

/** Everything in the RPC queue consumed and acknowledged by the service. */
const expectRpcQueueDrained = () =>
  expectQueueState(CONVERSATIONS_RPC_QUEUE, { ready: 0, unacked: 0, consumers: 1 });

describe('conversations.rpc: redelivery, duplicates and poison messages', () => {
  const probed = useRpcProbeStack();

  const request = (pattern: string, data: unknown, commandId?: string): RpcRequest =>
    rpcRequest(probed.account.accountId, pattern, data, commandId);

  async function createConversation(): Promise<string> {
    const { body } = await probed.probe.call(request(ConversationRpc.create.pattern, { subject: 'rpc' }));
    expect(body.ok).toBe(true);
    return (body as { data: { id: string } }).data.id;
  }

  async function messagesOf(conversationId: string) {
    return probed.stack.query(
      `SELECT id, sender, content FROM conversations.messages WHERE conversation_id = $1 ORDER BY position`,
      [conversationId],
    );
  }

  async function outboxOf(conversationId: string) {
    return probed.stack.query(
      `SELECT type, envelope FROM conversations.outbox WHERE conversation_id = $1 ORDER BY id`,
      [conversationId],
    );
  }

  it('replies on the reply address with the request correlation id, as JSON', async () => {
    const correlationId = randomUUID();
    const reply = await probed.probe.call(
      request(ConversationRpc.list.pattern, { limit: 1, offset: 0 }),
      correlationId,
    );
    expect(reply.message.properties.correlationId).toBe(correlationId);
    expect(reply.message.properties.contentType).toBe('application/json');
    expect(reply.body).toMatchObject({ ok: true, data: { pagination: { limit: 1, offset: 0 } } });
  });

  it('the same send-message command twice creates one message, and both replies are identical', async () => {
    const conversationId = await createConversation();
    const command = request(ConversationRpc.sendMessage.pattern, {
      conversationId,
      content: 'only once',
      sender: 'visitor',
    });
    const first = await probed.probe.call(command);
    const second = await probed.probe.call({ ...command, requestId: `req-${randomUUID()}` }); // a retry has its own request id
    expect(first.body.ok).toBe(true);
    expect(second.body).toEqual(first.body);

    const messages = await messagesOf(conversationId);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ id: (first.body as any).data.id, content: 'only once' });
    const [conversation] = await probed.stack.query(
      `SELECT message_count FROM conversations.conversations WHERE id = $1`,
      [conversationId],
    );
    expect(conversation.message_count).toBe(1);
    expect((await outboxOf(conversationId)).map((row) => row.type)).toEqual([
      'conversation.started',
      'message.received',
    ]);
    const processed = await probed.stack.query(
      `SELECT count(*)::int AS n FROM conversations.processed_commands WHERE command_id = $1`,
      [command.commandId],
    );
    expect(processed[0].n).toBe(1);
  });

  it('the same command arriving concurrently (10 copies) is applied once; every reply is the same', async () => {
    const conversationId = await createConversation();
    const command = request(ConversationRpc.sendMessage.pattern, {
      conversationId,
      content: 'racing',
      sender: 'agent',
    });
    const replies = await Promise.all(Array.from({ length: 10 }, () => probed.probe.call(command)));
    expect(replies[0].body.ok).toBe(true);
    for (const reply of replies) expect(reply.body).toEqual(replies[0].body);
    expect(await messagesOf(conversationId)).toHaveLength(1);
    expect((await outboxOf(conversationId)).map((row) => row.type)).toEqual([
      'conversation.started',
      'message.sent',
    ]);
  });

  it('a duplicated create is applied once (one conversation, one conversation.started)', async () => {
    const command = request(ConversationRpc.create.pattern, { subject: `dup-${randomUUID()}` });
    const replies = await Promise.all([
      probed.probe.call(command),
      probed.probe.call(command),
      probed.probe.call(command),
    ]);
    expect(replies[0].body.ok).toBe(true);
    for (const reply of replies) expect(reply.body).toEqual(replies[0].body);
    const rows = await probed.stack.query(
      `SELECT id FROM conversations.conversations WHERE account_id = $1 AND subject = $2`,
      [probed.account.accountId, (command.data as { subject: string }).subject],
    );
    expect(rows).toHaveLength(1);
    expect((await outboxOf(rows[0].id)).map((row) => row.type)).toEqual(['conversation.started']);
  });

  it('duplicated leads are applied once', async () => {
    const conversationId = await createConversation();
    const lead = request(ConversationRpc.captureLead.pattern, { conversationId, email: 'dup@example.com' });
    const replies = await Promise.all([
      probed.probe.call(lead),
      probed.probe.call(lead),
      probed.probe.call(lead),
    ]);
    expect(replies[0].body.ok).toBe(true);
    for (const reply of replies) expect(reply.body).toEqual(replies[0].body);
    const leads = await probed.stack.query(`SELECT id FROM conversations.leads WHERE conversation_id = $1`, [
      conversationId,
    ]);
    expect(leads).toEqual([{ id: (replies[0].body as any).data.id }]);
    expect((await outboxOf(conversationId)).map((row) => row.type)).toEqual([
      'conversation.started',
      'lead.captured',
    ]);
  });

  it('a status change replayed after later changes is not applied again: the stored reply comes back', async () => {
    const conversationId = await createConversation();
    const close = request(ConversationRpc.update.pattern, { conversationId, status: 'closed' });
    const first = await probed.probe.call(close);
    expect(first.body).toMatchObject({ ok: true, data: { status: 'closed' } });
    const reopen = await probed.probe.call(
      request(ConversationRpc.update.pattern, { conversationId, status: 'active' }),
    );
    expect(reopen.body).toMatchObject({ ok: true, data: { status: 'active' } });

    const replayed = await probed.probe.call(close);
    expect(replayed.body).toEqual(first.body);
    const [row] = await probed.stack.query(
      `SELECT status, closed_at FROM conversations.conversations WHERE id = $1`,
      [conversationId],
    );
    expect(row).toEqual({ status: 'active', closed_at: null });
    expect((await outboxOf(conversationId)).map((r) => r.type)).toEqual([
      'conversation.started',
      'conversation.closed',
      'conversation.reopened',
    ]);
  });

  it('an update (subject and tag edits) repeated after a later update is not applied again: the stored reply comes back', async () => {
    const conversationId = await createConversation();
    const edit = request(ConversationRpc.update.pattern, {
      conversationId,
      subject: 'first',
      add_tags: ['vip'],
    });
    const first = await probed.probe.call(edit);
    expect(first.body).toMatchObject({ ok: true, data: { subject: 'first', tags: ['vip'] } });
    const later = await probed.probe.call(
      request(ConversationRpc.update.pattern, { conversationId, subject: 'later', remove_tags: ['vip'] }),
    );
    expect(later.body).toMatchObject({ ok: true, data: { subject: 'later', tags: [] } });

    const repeated = await probed.probe.call({ ...edit, requestId: `req-${randomUUID()}` });
    expect(repeated.body).toEqual(first.body);
    const [row] = await probed.stack.query(
      `SELECT subject, tags FROM conversations.conversations WHERE id = $1`,
      [conversationId],
    );
    expect(row).toEqual({ subject: 'later', tags: [] });
    expect((await outboxOf(conversationId)).map((r) => r.type)).toEqual([
      'conversation.started',
      'conversation.updated',
      'conversation.updated',
    ]);
  });

  it('a command redelivered by the broker (redelivered flag set) after it was applied is answered from the stored reply', async () => {
    const conversationId = await createConversation();
    const command = request(ConversationRpc.sendMessage.pattern, {
      conversationId,
      content: 'redelivered',
      sender: 'visitor',
    });
    const first = await probed.probe.call(command);
    expect(first.body.ok).toBe(true);

    await probed.stack.stopConversations();
    const correlationId = randomUUID();
    let replyPromise: Promise<RpcProbeReply> | undefined;
    try {
      // The copy waits in the queue; a consumer takes it and gives it back unacknowledged, as a
      // crashed replica would, so the broker marks it redelivered.
      replyPromise = probed.probe.callRaw(Buffer.from(JSON.stringify(command)), correlationId);
      const grabber = await probed.probe.connection.createChannel();
      const taken = await eventually(
        async () => (await grabber.get(CONVERSATIONS_RPC_QUEUE, { noAck: false })) || false,
      );
      expect(taken.properties.correlationId).toBe(correlationId);
      expect(taken.fields.redelivered).toBe(false);
      grabber.nack(taken, false, true);
      const again = await eventually(
        async () => (await grabber.get(CONVERSATIONS_RPC_QUEUE, { noAck: false })) || false,
      );
      expect(again.fields.redelivered).toBe(true);
      grabber.nack(again, false, true);
      await grabber.close();
    } finally {
      await probed.stack.startConversations();
    }
    const second = await replyPromise;
    expect(second.body).toEqual(first.body);
    expect(await messagesOf(conversationId)).toHaveLength(1);
    expect((await outboxOf(conversationId)).map((row) => row.type)).toEqual([
      'conversation.started',
      'message.received',
    ]);
    await expectRpcQueueDrained();
  });

  it('a command redelivered before it was ever applied is applied exactly once', async () => {
    const conversationId = await createConversation();
    const command = request(ConversationRpc.sendMessage.pattern, {
      conversationId,
      content: 'first time redelivered',
      sender: 'agent',
    });
    await probed.stack.stopConversations();
    let replyPromise: Promise<RpcProbeReply> | undefined;
    try {
      replyPromise = probed.probe.call(command);
      const grabber = await probed.probe.connection.createChannel();
      await eventually(async () => (await grabber.get(CONVERSATIONS_RPC_QUEUE, { noAck: false })) || false);
      await grabber.close(); // closing with the delivery unacknowledged requeues it, redelivered
    } finally {
      await probed.stack.startConversations();
    }
    const reply = await replyPromise;
    expect(reply.body.ok).toBe(true);
    const messages = await messagesOf(conversationId);
    expect(messages).toHaveLength(1);
    expect(messages[0].id).toBe((reply.body as any).data.id);
  });

  describe('poison messages', () => {
    async function deadLettered(marker: string): Promise<GetMessage> {
      const channel = await probed.probe.connection.createChannel();
      try {
        return await eventually(async () => {
          const others: GetMessage[] = [];
          let found: GetMessage | undefined;
          for (;;) {
            const message = await channel.get(CONVERSATIONS_RPC_DEAD_LETTER_QUEUE, { noAck: false });
            if (!message) break;
            if (!found && message.content.toString('utf8').includes(marker)) {
              found = message;
              channel.ack(message);
            } else {
              others.push(message);
            }
          }
          for (const other of others) channel.nack(other, false, true);
          if (!found) throw new Error(`no dead-lettered message containing ${marker}`);
          return found;
        });
      } finally {
        await channel.close().catch(() => undefined);
      }
    }

    it.each([
      ['not JSON', (marker: string) => `this is { not json ${marker}`],
      ['a JSON string', (marker: string) => JSON.stringify(`just a string ${marker}`)],
      ['a JSON array', (marker: string) => JSON.stringify([ConversationRpc.list.pattern, marker])],
      [
        'an envelope without commandId',
        (marker: string) =>
          JSON.stringify({
            pattern: ConversationRpc.list.pattern,
            requestId: marker,
            accountId: randomUUID(),
            data: { limit: 1, offset: 0 },
          }),
      ],
      [
        'an envelope with an empty accountId',
        (marker: string) =>
          JSON.stringify({
            pattern: ConversationRpc.list.pattern,
            commandId: marker,
            requestId: marker,
            accountId: '',
            data: {},
          }),
      ],
    ])('%s is moved to the dead-letter queue and does not block the next command', async (_name, build) => {
      const marker = `poison-${randomUUID()}`;
      const content = Buffer.from(build(marker), 'utf8');
      probed.probe.channel.sendToQueue(CONVERSATIONS_RPC_QUEUE, content, {
        replyTo: DIRECT_REPLY_QUEUE,
        correlationId: marker,
      });

      const next = await probed.probe.call(request(ConversationRpc.list.pattern, { limit: 1, offset: 0 }));
      expect(next.body.ok).toBe(true);

      const dead = await deadLettered(marker);
      expect(dead.content.equals(content)).toBe(true);
      expect(dead.properties.deliveryMode).toBe(2);
      expect(dead.properties.headers).toMatchObject({
        'x-original-queue': CONVERSATIONS_RPC_QUEUE,
        'x-dead-letter-reason': expect.any(String),
      });
      await expectRpcQueueDrained();
    });

    it('a burst of poison between valid commands: every valid command is answered', async () => {
      const markers = Array.from({ length: 5 }, () => `burst-${randomUUID()}`);
      const calls: Array<Promise<RpcProbeReply>> = [];
      for (const marker of markers) {
        probed.probe.channel.sendToQueue(CONVERSATIONS_RPC_QUEUE, Buffer.from(`<<${marker}>>`));
        calls.push(probed.probe.call(request(ConversationRpc.list.pattern, { limit: 1, offset: 0 })));
      }
      const replies = await Promise.all(calls);
      expect(replies.map((r) => r.body.ok)).toEqual(Array(5).fill(true));
      for (const marker of markers) await deadLettered(marker);
      await expectRpcQueueDrained();
    });
  });

  it('an unknown pattern gets an internal_error reply and is acknowledged', async () => {
    const reply = await probed.probe.call(
      request('conversations.delete-everything', { conversationId: randomUUID() }),
    );
    expect(reply.body).toEqual({ ok: false, error: { code: 'internal_error', detail: expect.any(String) } });
    const next = await probed.probe.call(request(ConversationRpc.list.pattern, { limit: 1, offset: 0 }));
    expect(next.body.ok).toBe(true);
    await expectRpcQueueDrained();
  });

  describe('validation at the service (the gateway is not the only possible publisher)', () => {
    let conversationId: string;
    beforeAll(async () => {
      conversationId = await createConversation();
    });

    const cases: Array<[string, string, () => unknown, string[]]> = [
      [
        'empty content and unknown sender',
        ConversationRpc.sendMessage.pattern,
        () => ({ conversationId, content: '', sender: 'robot' }),
        ['content', 'sender'],
      ],
      [
        'content over 10000 characters',
        ConversationRpc.sendMessage.pattern,
        () => ({ conversationId, content: 'x'.repeat(10_001), sender: 'agent' }),
        ['content'],
      ],
      [
        'content of the wrong type',
        ConversationRpc.sendMessage.pattern,
        () => ({ conversationId, content: 42, sender: 'agent' }),
        ['content'],
      ],
      [
        'a non-canonical status',
        ConversationRpc.update.pattern,
        () => ({ conversationId, status: 'aktif' }),
        ['status'],
      ],
      [
        'a lead without email or phone',
        ConversationRpc.captureLead.pattern,
        () => ({ conversationId, name: 'x' }),
        ['email'],
      ],
      [
        'a lead with a bad email',
        ConversationRpc.captureLead.pattern,
        () => ({ conversationId, email: 'nope' }),
        ['email'],
      ],
      ['create with status closed', ConversationRpc.create.pattern, () => ({ status: 'closed' }), ['status']],
      [
        'create with a bad first message',
        ConversationRpc.create.pattern,
        () => ({ message: { content: 'hi' } }),
        ['message.sender'],
      ],
      [
        'create with metadata that is not an object',
        ConversationRpc.create.pattern,
        () => ({ metadata: [1, 2] }),
        ['metadata'],
      ],
      ['create without a payload', ConversationRpc.create.pattern, () => undefined, ['body']],
      ['list with limit 0', ConversationRpc.list.pattern, () => ({ limit: 0, offset: 0 }), ['limit']],
      [
        'list with a negative offset and an unknown status',
        ConversationRpc.list.pattern,
        () => ({ limit: 5, offset: -1, status: 'open' }),
        ['offset', 'status'],
      ],
    ];

    it.each(cases)(
      '%s gets a validation_failed reply naming the fields',
      async (_name, pattern, data, fields) => {
        const before = await probed.stack.query(
          `SELECT count(*)::int AS n FROM conversations.outbox WHERE account_id = $1`,
          [probed.account.accountId],
        );
        const reply = await probed.probe.call(request(pattern, data()));
        expect(reply.body.ok).toBe(false);
        const error = (reply.body as { error: any }).error;
        expect(error.code).toBe('validation_failed');
        expect(error.errors.map((e: { field: string }) => e.field).sort()).toEqual(fields);
        const after = await probed.stack.query(
          `SELECT count(*)::int AS n FROM conversations.outbox WHERE account_id = $1`,
          [probed.account.accountId],
        );
        expect(after[0].n).toBe(before[0].n);
      },
    );

    it.each([
      [
        'a NUL character in message content',
        ConversationRpc.sendMessage.pattern,
        () => ({ conversationId, content: 'a\u0000b', sender: 'agent' }),
      ],
      [
        'a NUL character in metadata',
        ConversationRpc.create.pattern,
        () => ({ metadata: { note: 'a\u0000b' } }),
      ],
      [
        'an unpaired surrogate in metadata',
        ConversationRpc.create.pattern,
        () => ({ metadata: { note: 'bad \ud800 text' } }),
      ],
    ])(
      '%s (unstorable in Postgres) is a validation_failed reply, not an internal error',
      async (_name, pattern, data) => {
        const reply = await probed.probe.call(request(pattern, data()));
        expect(reply.body).toMatchObject({ ok: false, error: { code: 'validation_failed' } });
        await expectRpcQueueDrained();
      },
    );

    it('a non-UUID conversation id is not_found, as over HTTP', async () => {
      const reply = await probed.probe.call(
        request(ConversationRpc.sendMessage.pattern, {
          conversationId: 'nope',
          content: 'x',
          sender: 'agent',
        }),
      );
      expect(reply.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    });

    it('another account cannot reach the conversation: not_found', async () => {
      const foreign = {
        ...request(ConversationRpc.get.pattern, { conversationId }),
        accountId: randomUUID(),
      };
      const reply = await probed.probe.call(foreign);
      expect(reply.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    });
  });
});
