import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  ConversationPage,
  ConversationRpc,
  ConversationView,
  ConversationWithMessagesView,
  isPgSnapshot,
  LeadView,
  MessageSender,
  MessageView,
  NewMessage,
  RpcCall,
} from '@app/contracts';
import { CommandLog } from '@app/database';
import { DomainError } from '@app/errors';
import { OutboxWriter } from '../outbox/outbox.writer';
import { toConversationView, toMessageView } from './conversation-row';
import { ConversationsRepository } from './conversations.repository';
import { transitionEvent } from './status-transitions';

/** Visitors' messages are `message.received` (a public event); everyone else's `message.sent`. */
const messageEventType = (sender: MessageSender) =>
  sender === 'visitor' ? 'message.received' : 'message.sent';

const notFound = (id: unknown) => new DomainError('not_found', `Conversation ${String(id)} was not found.`);

@Injectable()
export class ConversationsService {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly outbox: OutboxWriter,
    private readonly commands: CommandLog,
  ) {}

  async list(request: RpcCall<typeof ConversationRpc.list>): Promise<ConversationPage> {
    const query = request.data;
    if (query.snapshot !== undefined && !isPgSnapshot(query.snapshot)) {
      throw DomainError.validation([{ field: 'snapshot', message: 'must be a pg_snapshot' }]);
    }
    const page = await this.conversations.listPage(request.accountId, query);
    return {
      data: page.rows.map(toConversationView),
      pagination: { limit: query.limit, offset: query.offset, total: page.total, snapshot: page.snapshot },
    };
  }

  async get(request: RpcCall<typeof ConversationRpc.get>): Promise<ConversationWithMessagesView> {
    const { conversationId } = request.data;
    const row = await this.conversations.findWithMessages(request.accountId, conversationId);
    if (!row) throw notFound(conversationId);
    return { ...toConversationView(row), messages: row.messages.map(toMessageView) };
  }

  create(request: RpcCall<typeof ConversationRpc.create>): Promise<ConversationView> {
    const { data: command, accountId } = request;
    return this.commands.applyOnce(request, async (tx) => {
      const row = await this.conversations.insertConversation(tx, accountId, {
        id: randomUUID(),
        status: command.status ?? 'active',
        visitor: command.visitor
          ? {
              name: command.visitor.name ?? null,
              email: command.visitor.email ?? null,
              phone: command.visitor.phone ?? null,
            }
          : null,
        subject: command.subject ?? null,
        metadata: command.metadata ?? {},
      });
      const started = toConversationView(row);
      await this.outbox.append(tx, accountId, row.id, 'conversation.started', { conversation: started });
      if (!command.message) return started;
      const saved = await this.appendMessage(tx, accountId, row.id, command.message);
      return saved!.conversation;
    });
  }

  sendMessage(request: RpcCall<typeof ConversationRpc.sendMessage>): Promise<MessageView> {
    const { data: command, accountId } = request;
    const event = this.outbox.envelope(accountId, command.conversationId, messageEventType(command.sender));
    return this.commands.applyOnceInStatement(request, async () => {
      const saved = await this.conversations.sendMessage(
        accountId,
        command.conversationId,
        { id: randomUUID(), sender: command.sender, content: command.content },
        { envelope: event, type: event.type, id: event.id },
        { id: request.commandId, pattern: request.pattern },
      );
      if (saved) return toMessageView(saved.message);
      // Nothing appended: the conversation is closed, or not this account's (or not there).
      const current = await this.conversations.find(accountId, command.conversationId);
      if (!current) throw notFound(command.conversationId);
      throw new DomainError(
        'conversation_closed',
        `Conversation ${current.id} is closed; reopen it to send messages.`,
      );
    });
  }

  changeStatus(request: RpcCall<typeof ConversationRpc.changeStatus>): Promise<ConversationView> {
    const command = request.data;
    return this.commands.applyOnce(request, async (tx) => {
      const current = await this.conversations.lock(tx, request.accountId, command.conversationId);
      if (!current) throw notFound(command.conversationId);
      if (current.status === command.status) return toConversationView(current);
      const event = transitionEvent(current.status, command.status);
      if (!event) {
        throw new DomainError(
          'invalid_transition',
          `A ${current.status} conversation cannot become ${command.status}.`,
        );
      }
      const conversation = toConversationView(
        await this.conversations.updateStatus(tx, request.accountId, current, command.status),
      );
      const data =
        event === 'conversation.status_changed'
          ? { conversation, previous_status: current.status }
          : { conversation };
      await this.outbox.append(tx, request.accountId, current.id, event, data);
      return conversation;
    });
  }

  captureLead(request: RpcCall<typeof ConversationRpc.captureLead>): Promise<LeadView> {
    const command = request.data;
    return this.commands.applyOnce(request, async (tx) => {
      const current = await this.conversations.lock(tx, request.accountId, command.conversationId);
      if (!current) throw notFound(command.conversationId);
      const contact = {
        name: command.name ?? null,
        email: command.email ?? null,
        phone: command.phone ?? null,
      };
      const saved = await this.conversations.saveLead(tx, request.accountId, current.id, {
        id: randomUUID(),
        ...contact,
      });
      const lead: LeadView = {
        id: saved.lead.id,
        conversation_id: current.id,
        ...contact,
        created_at: saved.lead.created_at,
      };
      await this.outbox.append(tx, request.accountId, current.id, 'lead.captured', {
        conversation_id: current.id,
        lead,
      });
      return lead;
    });
  }

  /**
   * Adds a message to an open conversation, with its event: visitors' messages are
   * `message.received`, others `message.sent`. Undefined if the conversation is closed or missing.
   */
  private async appendMessage(
    tx: EntityManager,
    accountId: string,
    conversationId: string,
    input: NewMessage,
  ) {
    const saved = await this.conversations.appendMessage(tx, accountId, conversationId, {
      id: randomUUID(),
      sender: input.sender,
      content: input.content,
    });
    if (!saved) return undefined;
    const message = toMessageView(saved.message);
    const type = messageEventType(message.sender);
    await this.outbox.append(tx, accountId, conversationId, type, {
      conversation_id: conversationId,
      message,
    });
    return { message, conversation: toConversationView(saved.conversation) };
  }
}
