import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CONVERSATIONS_RPC_QUEUE, ConversationRpc, RpcRequest } from '@app/contracts';
import {
  eventually,
  PrometheusText,
  queueState,
  RpcProbe,
  RpcProbeReply,
  TestAccount,
  TestStack,
} from '@app/testing';

/**
 * Send-message commands that arrive while a statement runs share the next one
 * (MessageAppender). With DATABASE_BATCH_CONCURRENCY=1, a first command held on its
 * conversation's row lock (taken here, in a transaction of the test's own) lets the next ones
 * gather; released, they are written together. Each must come out exactly as if it had run
 * alone: its message at its conversation's next position, its event with the next sequence, its
 * command recorded once, and its own reply, success or error.
 */
const APPENDS = { statement: 'append_messages' };

describe('send-message commands written together', () => {
  let stack: TestStack;
  let probe: RpcProbe;
  let account: TestAccount;

  beforeAll(async () => {
    stack = await TestStack.start({ conversations: { DATABASE_BATCH_CONCURRENCY: '1' } });
    probe = await RpcProbe.open();
    account = await stack.createAccount();
  });
  afterAll(async () => {
    await probe?.close();
    await stack?.close();
  });

  const request = (pattern: string, data: unknown, accountId = account.accountId): RpcRequest => ({
    pattern,
    commandId: randomUUID(),
    requestId: `req-${randomUUID()}`,
    accountId,
    data,
  });
  const send = (conversationId: string, content: string, accountId?: string) =>
    request(ConversationRpc.sendMessage.pattern, { conversationId, content, sender: 'agent' }, accountId);

  async function createConversation(accountId = account.accountId): Promise<string> {
    const { body } = await probe.call(request(ConversationRpc.create.pattern, {}, accountId));
    expect(body.ok).toBe(true);
    return (body as { data: { id: string } }).data.id;
  }

  const metrics = () => PrometheusText.scrape(stack.conversations!.opsUrl);

  /**
   * Publishes a command to a conversation whose row the test holds locked, then `commands`; once
   * the service holds them all, releases the lock. Resolves with every reply, the first's first.
   */
  async function gathered(commands: RpcRequest[]): Promise<RpcProbeReply[]> {
    const blocked = await createConversation();
    const lock = new Client({ connectionString: process.env.DATABASE_URL });
    await lock.connect();
    try {
      await lock.query('BEGIN');
      await lock.query('SELECT 1 FROM conversations.conversations WHERE id = $1 FOR UPDATE', [blocked]);
      const replies = [send(blocked, 'first, alone'), ...commands].map((command) => probe.call(command));
      await eventually(() => queueState(CONVERSATIONS_RPC_QUEUE).unacked === commands.length + 1, 10_000);
      await lock.query('COMMIT');
      return await Promise.all(replies);
    } finally {
      await lock.end();
    }
  }

  async function stored(conversationId: string) {
    const messages = await stack.query<{ id: string; content: string; position: number }>(
      `SELECT id, content, position FROM conversations.messages WHERE conversation_id = $1 ORDER BY position`,
      [conversationId],
    );
    const events = await stack.query<{ type: string; sequence: number; message_id: string | null }>(
      `SELECT type, sequence, envelope #>> '{data,message,id}' AS message_id
         FROM conversations.outbox WHERE conversation_id = $1 ORDER BY sequence`,
      [conversationId],
    );
    return { messages, events };
  }

  it('writes the commands that arrived meanwhile in one statement, one per conversation, each in its place', async () => {
    const conversations = await Promise.all(Array.from({ length: 6 }, () => createConversation()));
    const commands = [
      ...conversations.map((id) => send(id, 'one')),
      ...conversations.map((id) => send(id, 'two')),
    ];
    const before = await metrics();

    const [, ...replies] = await gathered(commands);

    for (const reply of replies) expect(reply.body.ok).toBe(true);
    // The lone first command, then one statement for each conversation's first message and one
    // for the seconds (a conversation's next message waits for its previous one's commit).
    const after = await metrics();
    expect(after.since(before, 'cms_statement_batch_size_count', APPENDS)).toBe(3);
    expect(after.since(before, 'cms_statement_batch_size_sum', APPENDS)).toBe(13);
    for (const conversationId of conversations) {
      const { messages, events } = await stored(conversationId);
      expect(messages.map(({ content, position }) => [content, position])).toEqual([
        ['one', 1],
        ['two', 2],
      ]);
      expect(events.map(({ type, sequence, message_id }) => [type, sequence, message_id])).toEqual([
        ['conversation.started', 1, null],
        ['message.sent', 2, messages[0].id],
        ['message.sent', 3, messages[1].id],
      ]);
    }
    const replyIds = replies.map((reply) => (reply.body as { data: { id: string } }).data.id);
    const recorded = await stack.query<{ response: { id: string } }>(
      `SELECT response FROM conversations.processed_commands WHERE command_id = ANY($1)`,
      [commands.map((command) => command.commandId)],
    );
    expect(recorded.map((row) => row.response.id).sort()).toEqual([...replyIds].sort());
  });

  it('a command repeated among others fails their statement: each is retried alone, the repeat gets its first reply', async () => {
    const repeated = send(await createConversation(), 'once only');
    const first = await probe.call(repeated);
    expect(first.body.ok).toBe(true);
    const others = await Promise.all(Array.from({ length: 4 }, () => createConversation()));
    const before = await metrics();

    const [, again, ...replies] = await gathered([repeated, ...others.map((id) => send(id, 'new'))]);

    expect(again.body).toEqual(first.body);
    for (const reply of replies) expect(reply.body.ok).toBe(true);
    const after = await metrics();
    expect(after.since(before, 'cms_statement_batches_split_total', APPENDS)).toBe(1);
    const { messages } = await stored((repeated.data as { conversationId: string }).conversationId);
    expect(messages).toHaveLength(1);
    for (const conversationId of others) expect((await stored(conversationId)).messages).toHaveLength(1);
  });

  it('a closed or another account’s conversation in a shared statement gets its own error; the others are written', async () => {
    const closed = await createConversation();
    const closing = await probe.call(
      request(ConversationRpc.changeStatus.pattern, { conversationId: closed, status: 'closed' }),
    );
    expect(closing.body.ok).toBe(true);
    const foreign = await createConversation(randomUUID());
    const open = await createConversation();
    const before = await metrics();

    const [, toClosed, toForeign, toOpen] = await gathered([
      send(closed, 'too late'),
      send(foreign, 'not yours'),
      send(open, 'welcome'),
    ]);

    expect(toClosed.body).toMatchObject({ ok: false, error: { code: 'conversation_closed' } });
    expect(toForeign.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(toOpen.body).toMatchObject({ ok: true, data: { content: 'welcome', conversation_id: open } });
    const after = await metrics();
    expect(after.since(before, 'cms_statement_batches_split_total', APPENDS)).toBe(0);
    expect(after.since(before, 'cms_statement_batch_size_sum', APPENDS)).toBe(4);
    expect((await stored(closed)).messages).toEqual([]);
    expect((await stored(foreign)).messages).toEqual([]);
  });
});
