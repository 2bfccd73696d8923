import { Client } from 'pg';
import { CONVERSATIONS_RPC_QUEUE, ConversationRpc } from '@app/contracts';
import { expectQueueState, rpcRequest, useRpcProbeStack } from '@app/testing';

/**
 * The RPC server acknowledges the commands finished in one turn together (one `basic.ack` with
 * `multiple` for the oldest outstanding), and a command finished behind one still running alone:
 * the broker sees every finished command acknowledged, whatever order they finish in, and a slow
 * command holds one prefetch slot, not one for every command that arrived after it.
 */
describe('acknowledgements of RPC commands', () => {
  const probed = useRpcProbeStack();
  const request = (pattern: string, data: unknown) => rpcRequest(probed.account.accountId, pattern, data);

  it('acknowledges commands that finish behind a running one, and that one once it finishes', async () => {
    const { body } = await probed.probe.call(request(ConversationRpc.create.pattern, {}));
    const conversationId = (body as { data: { id: string } }).data.id;
    const lock = new Client({ connectionString: process.env.DATABASE_URL });
    await lock.connect();
    try {
      await lock.query('BEGIN');
      await lock.query('SELECT 1 FROM conversations.conversations WHERE id = $1 FOR UPDATE', [
        conversationId,
      ]);
      // The oldest delivery waits on the lock; the reads delivered after it finish.
      const held = probed.probe.call(
        request(ConversationRpc.sendMessage.pattern, { conversationId, content: 'held', sender: 'agent' }),
      );
      const reads = await Promise.all(
        Array.from({ length: 8 }, () =>
          probed.probe.call(request(ConversationRpc.list.pattern, { limit: 1, offset: 0 })),
        ),
      );
      for (const read of reads) expect(read.body.ok).toBe(true);
      await expectQueueState(CONVERSATIONS_RPC_QUEUE, { ready: 0, unacked: 1, consumers: 1 }, 10_000);

      await lock.query('COMMIT');
      expect((await held).body.ok).toBe(true);
      await expectQueueState(CONVERSATIONS_RPC_QUEUE, { ready: 0, unacked: 0, consumers: 1 }, 10_000);
    } finally {
      await lock.end();
    }
  });

  it('acknowledges every one of many commands finishing together', async () => {
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        probed.probe.call(request(ConversationRpc.create.pattern, { subject: `together ${index}` })),
      ),
    );
    for (const reply of replies) expect(reply.body.ok).toBe(true);
    await expectQueueState(CONVERSATIONS_RPC_QUEUE, { ready: 0, unacked: 0, consumers: 1 }, 10_000);
  });
});
