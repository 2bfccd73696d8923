import {
  compileSchema,
  ConversationPage,
  ConversationRpc,
  ConversationView,
  ConversationWithMessagesView,
  MessageView,
} from '@app/contracts';
import { rpcRequest, useRpcProbeStack } from '@app/testing';

/**
 * Postgres writes the JSON of the conversations that get and list read (conversations.sql.ts,
 * conversationJson), and it goes out as the response body unparsed. It must be exactly what the
 * contract's serializer writes from the same rows: here every kind of value a conversation can
 * hold is read both ways, the serializer's through replies that render the stored row in
 * JavaScript (a no-op status change, the messages' own replies).
 */
describe('conversations as Postgres writes their JSON', () => {
  const probed = useRpcProbeStack();
  const isConversation = compileSchema(ConversationWithMessagesView);
  const isPage = compileSchema(ConversationPage);

  async function call<T>(pattern: string, data: unknown): Promise<T> {
    const { body } = await probed.probe.call(rpcRequest(probed.account.accountId, pattern, data));
    if (!body.ok) throw new Error(`${pattern}: ${JSON.stringify(body.error)}`);
    return body.data as T;
  }

  const tricky = 'quotes " and \\ backslash, tab\t, newline\n, é, 中文, emoji 🎉, \u2028 and </script>';
  const cases: Array<{ name: string; create: Record<string, unknown>; messages: string[]; status?: string }> =
    [
      { name: 'bare', create: {}, messages: [] },
      {
        name: 'visitor with only an email, pending',
        create: { visitor: { email: 'ada@example.com' }, status: 'pending' },
        messages: ['one'],
      },
      {
        name: 'every field, awkward text',
        create: {
          subject: tricky,
          visitor: { name: tricky, email: 'x@example.com', phone: '+44 20' },
          metadata: {
            nested: { deep: [1, 2.5, -3e-7, true, false, null, 'a "b"'] },
            [tricky]: 'key with awkward text',
            empty: {},
            list: [],
          },
        },
        messages: [tricky, 'second', '{"not":"json"}'],
      },
      { name: 'closed', create: { subject: 'done' }, messages: ['bye'], status: 'closed' },
    ];

  it.each(cases)(
    '$name: get and list give what the serializer gives',
    async ({ create, messages, status }) => {
      const created = await call<ConversationView>(ConversationRpc.create.pattern, create);
      const sent: MessageView[] = [];
      for (const content of messages) {
        sent.push(
          await call<MessageView>(ConversationRpc.sendMessage.pattern, {
            conversationId: created.id,
            content,
            sender: 'agent',
          }),
        );
      }
      if (status) await call(ConversationRpc.update.pattern, { conversationId: created.id, status });
      // Serialized from the row by the reply's schema: the same status again changes nothing.
      const current = await call<ConversationView>(ConversationRpc.update.pattern, {
        conversationId: created.id,
        status: status ?? (create.status as string | undefined) ?? 'active',
      });

      const read = await call<ConversationWithMessagesView>(ConversationRpc.get.pattern, {
        conversationId: created.id,
      });
      expect(isConversation(read)).toBe(true);
      expect(read).toEqual({ ...current, messages: sent });
      expect(Object.keys(read)).toEqual([...Object.keys(current), 'messages']);

      const page = await call<ConversationPage>(ConversationRpc.list.pattern, { limit: 100, offset: 0 });
      expect(isPage(page)).toBe(true);
      expect(page.data.find((row) => row.id === created.id)).toEqual(current);
    },
  );
});
