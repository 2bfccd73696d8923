import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import {
  ConversationPage,
  ConversationRpc,
  ConversationView,
  ConversationWithMessagesView,
  JsonText,
  LeadView,
  MessagePage,
  MessageSender,
  MessageView,
  NewMessage,
  RpcCall,
  SnapshotSealer,
} from '@app/contracts';
import { CommandLog } from '@app/database';
import { DomainError } from '@app/errors';
import { type EventCause, OutboxWriter } from '../outbox/outbox.writer';
import { toConversationView, toMessageView } from './conversation-row';
import { ConversationsRepository, MAX_MESSAGES_PER_READ } from './conversations.repository';
import { editedDetails } from './edited-details';
import { ConversationReader } from './conversation-reader';
import { MessageAppender } from './message-appender';
import { transitionEvent } from './status-transitions';

/** Visitors' messages are `message.received` (a public event); everyone else's `message.sent`. */
const messageEventType = (sender: MessageSender) =>
  sender === 'visitor' ? 'message.received' : 'message.sent';

/** Above any message's position (an int4 column): where a newest-first read starts. */
const MAX_POSITION = 2_147_483_647;

const notFound = (id: unknown) => new DomainError('not_found', `Conversation ${String(id)} was not found.`);

@Injectable()
export class ConversationsService {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly outbox: OutboxWriter,
    private readonly commands: CommandLog,
    private readonly sealer: SnapshotSealer,
    private readonly appender: MessageAppender,
    private readonly reader: ConversationReader,
  ) {}

  /**
   * A page as of the snapshot of the client's token (the one it was given is echoed), or as of
   * now with a new token sealing the snapshot read at.
   */
  async list(request: RpcCall<typeof ConversationRpc.list>): Promise<JsonText<ConversationPage>> {
    const query = request.data;
    const snapshot =
      query.snapshot === undefined ? undefined : this.sealer.open(query.snapshot, request.accountId);
    if (query.snapshot !== undefined && snapshot === undefined) {
      throw DomainError.validation([
        { field: 'snapshot', message: 'must be a pagination.snapshot token returned by an earlier page' },
      ]);
    }
    const page = await this.reader.page(request.accountId, { ...query, snapshot });
    const pagination: ConversationPage['pagination'] = {
      limit: query.limit,
      offset: query.offset,
      total: page.total,
      snapshot: query.snapshot ?? this.sealer.seal(page.snapshot, request.accountId),
    };
    // The rows as Postgres wrote them; pagination last, as the gateway's next link expects.
    return new JsonText(`{"data":[${page.json.join(',')}],"pagination":${JSON.stringify(pagination)}}`);
  }

  async get(request: RpcCall<typeof ConversationRpc.get>): Promise<JsonText<ConversationWithMessagesView>> {
    const { conversationId } = request.data;
    const read = await this.reader.read(request.accountId, conversationId);
    if (!read) throw notFound(conversationId);
    if (read.json === null) {
      throw new DomainError(
        'conversation_too_large',
        `Conversation ${read.id} has ${read.message_count} messages, over the ${MAX_MESSAGES_PER_READ} one read returns; read them in pages with GET /v1/conversations/${read.id}/messages.`,
      );
    }
    return new JsonText(read.json);
  }

  create(request: RpcCall<typeof ConversationRpc.create>): Promise<ConversationView> {
    const { data: command, accountId } = request;
    return this.outbox.relayOnCommit(
      this.commands.applyOnce(request, async (tx) => {
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
        await this.outbox.append(tx, request, row, 'conversation.started', { conversation: started });
        if (!command.message) return started;
        const saved = await this.appendMessage(tx, request, row.id, command.message);
        return saved!.conversation;
      }),
    );
  }

  sendMessage(request: RpcCall<typeof ConversationRpc.sendMessage>): Promise<MessageView> {
    const { data: command, accountId } = request;
    const event = this.outbox.envelope(request, command.conversationId, messageEventType(command.sender));
    return this.outbox.relayOnCommit(
      this.commands.applyOnceInStatement(request, async (record) => {
        const appended = await this.appender.append({
          accountId,
          conversationId: command.conversationId,
          message: { id: randomUUID(), sender: command.sender, content: command.content },
          event: { envelope: event, type: event.type, id: event.id },
          command: record,
        });
        if (appended) return toMessageView(appended);
        // Nothing appended: the conversation is closed, or not this account's (or not there).
        const current = await this.conversations.find(accountId, command.conversationId);
        if (!current) throw notFound(command.conversationId);
        throw new DomainError(
          'conversation_closed',
          `Conversation ${current.id} is closed; reopen it to send messages.`,
        );
      }),
    );
  }

  /** The status-only form of update, kept for gateways of the previous release during a rolling deploy. */
  changeStatus(request: RpcCall<typeof ConversationRpc.changeStatus>): Promise<ConversationView> {
    return this.update(request);
  }

  /**
   * Changes the status and/or the subject, visitor and metadata, under the conversation's lock: a
   * status move emits its transition event, a change of the other fields `conversation.updated`
   * (naming them); values equal to the stored ones change nothing and emit nothing.
   */
  update(request: RpcCall<typeof ConversationRpc.update>): Promise<ConversationView> {
    const { data: command, accountId } = request;
    return this.outbox.relayOnCommit(
      this.commands.applyOnce(request, async (tx) => {
        let current = await this.conversations.lock(tx, accountId, command.conversationId);
        if (!current) throw notFound(command.conversationId);
        if (command.status !== undefined && command.status !== current.status) {
          const event = transitionEvent(current.status, command.status);
          if (!event) {
            throw new DomainError(
              'invalid_transition',
              `A ${current.status} conversation cannot become ${command.status}.`,
            );
          }
          const previous = current.status;
          current = await this.conversations.updateStatus(tx, accountId, current, command.status);
          const conversation = toConversationView(current);
          const data =
            event === 'conversation.status_changed'
              ? { conversation, previous_status: previous }
              : { conversation };
          await this.outbox.append(tx, request, current, event, data);
        }
        const edit = editedDetails(current, command);
        if (edit.changed.length > 0) {
          current = await this.conversations.updateDetails(tx, accountId, current.id, edit.details);
          await this.outbox.append(tx, request, current, 'conversation.updated', {
            conversation: toConversationView(current),
            changed: edit.changed,
          });
        }
        return toConversationView(current);
      }),
    );
  }

  /** A page of a conversation's messages (issue 14, item 1): for conversations too long to read whole. */
  async listMessages(request: RpcCall<typeof ConversationRpc.listMessages>): Promise<MessagePage> {
    const { conversationId, limit, order, afterPosition } = request.data;
    const after = afterPosition ?? (order === 'asc' ? -1 : MAX_POSITION);
    const page = await this.conversations.messagePage(request.accountId, conversationId, {
      limit,
      order,
      after,
    });
    if (page.rows.length === 0 && !(await this.conversations.find(request.accountId, conversationId))) {
      throw notFound(conversationId);
    }
    return {
      data: page.rows.map(({ position: _position, ...message }) => toMessageView(message)),
      nextAfterPosition: page.more ? page.rows[page.rows.length - 1].position : null,
    };
  }

  async getLead(request: RpcCall<typeof ConversationRpc.getLead>): Promise<LeadView> {
    const { conversationId } = request.data;
    const lead = await this.conversations.latestLead(request.accountId, conversationId);
    if (lead) return lead;
    if (!(await this.conversations.find(request.accountId, conversationId))) throw notFound(conversationId);
    throw new DomainError('not_found', `Conversation ${conversationId} has no lead yet.`);
  }

  captureLead(request: RpcCall<typeof ConversationRpc.captureLead>): Promise<LeadView> {
    const command = request.data;
    return this.outbox.relayOnCommit(
      this.commands.applyOnce(request, async (tx) => {
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
        await this.outbox.append(tx, request, saved.conversation, 'lead.captured', {
          conversation_id: current.id,
          lead,
        });
        return lead;
      }),
    );
  }

  /**
   * Adds a message to an open conversation, with its event: visitors' messages are
   * `message.received`, others `message.sent`. Undefined if the conversation is closed or missing.
   */
  private async appendMessage(
    tx: EntityManager,
    cause: EventCause,
    conversationId: string,
    input: NewMessage,
  ) {
    const saved = await this.conversations.appendMessage(tx, cause.accountId, conversationId, {
      id: randomUUID(),
      sender: input.sender,
      content: input.content,
    });
    if (!saved) return undefined;
    const message = toMessageView(saved.message);
    const type = messageEventType(message.sender);
    await this.outbox.append(tx, cause, saved.conversation, type, {
      conversation_id: conversationId,
      message,
    });
    return { message, conversation: toConversationView(saved.conversation) };
  }
}
