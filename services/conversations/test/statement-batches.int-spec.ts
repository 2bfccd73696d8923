import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CONVERSATIONS_RPC_QUEUE, ConversationRpc, RpcRequest } from '@app/contracts';
import {
  eventually,
  PrometheusText,
  queueState,
  RpcProbeReply,
  rpcRequest,
  useRpcProbeStack,
} from '@app/testing';

/**
 * Commands and reads that arrive while a statement of their kind runs share the next one
 * (BatchedCalls: MessageAppender, ConversationReader). With DATABASE_BATCH_CONCURRENCY=1, a first
 * one held on a lock (taken here, in a transaction of the test's own) lets the next ones gather;
 * released, they share a statement. Each must come out exactly as if it had run alone: a message
 * at its conversation's next position, its event with the next sequence, its command recorded
 * once, and its own reply, success or error, of its own account's data only.
 */
const APPENDS = { statement: 'append_messages' };
const READS = { statement: 'read_conversations' };
const PAGES = { statement: 'list_pages' };

describe('commands and reads sharing statements', () => {
  const probed = useRpcProbeStack({ conversations: { DATABASE_BATCH_CONCURRENCY: '1' } });

  const request = (pattern: string, data: unknown, accountId = probed.account.accountId): RpcRequest =>
    rpcRequest(accountId, pattern, data);
  const send = (conversationId: string, content: string, accountId?: string) =>
    request(ConversationRpc.sendMessage.pattern, { conversationId, content, sender: 'agent' }, accountId);

  async function createConversation(accountId = probed.account.accountId): Promise<string> {
    const { body } = await probed.probe.call(request(ConversationRpc.create.pattern, {}, accountId));
    expect(body.ok).toBe(true);
    return (body as { data: { id: string } }).data.id;
  }

  const metrics = () => PrometheusText.scrape(probed.stack.conversations!.opsUrl);

  /** Holds a conversation's row: a send-message to it waits. */
  const holdingAConversation = async (lock: Client) => {
    const blocked = await createConversation();
    await lock.query('SELECT 1 FROM conversations.conversations WHERE id = $1 FOR UPDATE', [blocked]);
    return send(blocked, 'first, alone');
  };

  /**
   * Takes a lock with `hold`, which returns a command or read that then waits for it, publishes
   * that one and `commands`; once the service holds them all, releases the lock. Resolves with
   * every reply, the first's first.
   */
  async function gathered(
    commands: RpcRequest[],
    hold: (lock: Client) => Promise<RpcRequest> = holdingAConversation,
  ): Promise<RpcProbeReply[]> {
    const lock = new Client({ connectionString: process.env.DATABASE_URL });
    await lock.connect();
    try {
      await lock.query('BEGIN');
      const first = await hold(lock);
      const replies = [first, ...commands].map((command) => probed.probe.call(command));
      await eventually(() => queueState(CONVERSATIONS_RPC_QUEUE).unacked === commands.length + 1, 10_000);
      await lock.query('COMMIT');
      return await Promise.all(replies);
    } finally {
      await lock.end();
    }
  }

  async function stored(conversationId: string) {
    const messages = await probed.stack.query<{ id: string; content: string; position: number }>(
      `SELECT id, content, position FROM conversations.messages WHERE conversation_id = $1 ORDER BY position`,
      [conversationId],
    );
    const events = await probed.stack.query<{ type: string; sequence: number; message_id: string | null }>(
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
    const recorded = await probed.stack.query<{ response: { id: string } }>(
      `SELECT response FROM conversations.processed_commands WHERE command_id = ANY($1)`,
      [commands.map((command) => command.commandId)],
    );
    expect(recorded.map((row) => row.response.id).sort()).toEqual([...replyIds].sort());
  });

  it('a command repeated among others fails their statement: each is retried alone, the repeat gets its first reply', async () => {
    const repeated = send(await createConversation(), 'once only');
    const first = await probed.probe.call(repeated);
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
    const closing = await probed.probe.call(
      request(ConversationRpc.update.pattern, { conversationId: closed, status: 'closed' }),
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

  const get = (conversationId: string, accountId?: string) =>
    request(ConversationRpc.get.pattern, { conversationId }, accountId);
  const list = (accountId: string) =>
    request(ConversationRpc.list.pattern, { limit: 100, offset: 0, status: 'active' }, accountId);

  it('reads of different accounts in one statement each get their own conversation, or a 404', async () => {
    const other = await probed.stack.createAccount();
    const mine = await createConversation();
    const theirs = await createConversation(other.accountId);
    const before = await metrics();

    const [, ownRead, theirRead, crossRead] = await gathered(
      [get(mine), get(theirs, other.accountId), get(theirs)],
      async (lock) => {
        await lock.query('LOCK TABLE conversations.messages IN ACCESS EXCLUSIVE MODE');
        return get(mine);
      },
    );

    expect(ownRead.body).toMatchObject({ ok: true, data: { id: mine, messages: [] } });
    expect(theirRead.body).toMatchObject({ ok: true, data: { id: theirs } });
    expect(crossRead.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const after = await metrics();
    expect(after.since(before, 'cms_statement_batch_size_count', READS)).toBe(2);
    expect(after.since(before, 'cms_statement_batch_size_sum', READS)).toBe(4);
  });

  it('pages of different accounts in one statement each list their own conversations, with their own totals', async () => {
    const first = await probed.stack.createAccount();
    const second = await probed.stack.createAccount();
    const firsts = await Promise.all([1, 2, 3].map(() => createConversation(first.accountId)));
    const seconds = await Promise.all([1, 2].map(() => createConversation(second.accountId)));
    const before = await metrics();

    const [, firstPage, secondPage] = await gathered(
      [list(first.accountId), list(second.accountId)],
      async (lock) => {
        await lock.query('LOCK TABLE conversations.status_counts IN ACCESS EXCLUSIVE MODE');
        return list(first.accountId);
      },
    );

    type Page = { data: Array<{ id: string }>; pagination: { total: number } };
    const ids = (reply: RpcProbeReply) => (reply.body as { data: Page }).data.data.map((row) => row.id);
    expect(ids(firstPage).sort()).toEqual([...firsts].sort());
    expect(ids(secondPage).sort()).toEqual([...seconds].sort());
    expect((firstPage.body as { data: Page }).data.pagination.total).toBe(3);
    expect((secondPage.body as { data: Page }).data.pagination.total).toBe(2);
    const after = await metrics();
    expect(after.since(before, 'cms_statement_batch_size_count', PAGES)).toBe(2);
    expect(after.since(before, 'cms_statement_batch_size_sum', PAGES)).toBe(3);
  });
});
