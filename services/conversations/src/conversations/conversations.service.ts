import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import {
  ConversationPage,
  ConversationRpc,
  ConversationView,
  ConversationWithMessagesView,
  DeletedConversation,
  JsonText,
  LeadView,
  MessagePage,
  MessageView,
  NewMessage,
  normalizeTags,
  RpcCall,
  SnapshotSealer,
} from '@app/contracts';
import { CommandLog } from '@app/database';
import { DomainError } from '@app/errors';
import { type EventCause, eventEnvelope, OutboxWriter } from '../outbox/outbox.writer';
import { toConversationView } from './conversation-row';
import {
  ConversationsRepository,
  MAX_MESSAGES_PER_READ,
  type MessageAppend,
} from './conversations.repository';
import { editedDetails } from './edited-details';
import { checkTagEdits } from './tag-edits';
import { ConversationReader } from './conversation-reader';
import { MessageAppender } from './message-appender';
import { transitionEvent } from './status-transitions';
import { messageEventType } from './message-event-type';

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
    const tag = query.tag && normalizeTags(query.tag);
    const page = await this.reader.page(
      request.accountId,
      { ...query, snapshot, ...(tag && { tag }) },
      request.trace,
    );
    const pagination: ConversationPage['pagination'] = {
      limit: query.limit,
      offset: query.offset,
      total: page.total,
      ...(page.bounded && { total_is_lower_bound: true }),
      snapshot: query.snapshot ?? this.sealer.seal(page.snapshot, request.accountId),
    };
    // The rows as Postgres wrote them; pagination last, as the gateway's next link expects.
    return new JsonText(`{"data":[${page.json.join(',')}],"pagination":${JSON.stringify(pagination)}}`);
  }

  async get(request: RpcCall<typeof ConversationRpc.get>): Promise<JsonText<ConversationWithMessagesView>> {
    const { conversationId } = request.data;
    const read = await this.reader.read(request.accountId, conversationId, request.trace);
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
          tags: normalizeTags(command.tags ?? []),
        });
        const started = toConversationView(row);
        await this.outbox.append(tx, request, row, 'conversation.started', { conversation: started });
        if (!command.message) return started;
        // The first message is appended as a send's is (its event included); create records the command.
        const append = this.messageAppend(request, row.id, command.message);
        await this.conversations.appendMessages([{ ...append, command: null }], tx);
        const appended = await this.conversations.lock(tx, accountId, row.id);
        return toConversationView(appended!);
      }),
    );
  }

  sendMessage(request: RpcCall<typeof ConversationRpc.sendMessage>): Promise<MessageView> {
    const { data: command, accountId } = request;
    const append = this.messageAppend(request, command.conversationId, command);
    return this.outbox.relayOnCommit(
      this.commands.applyOnceInStatement(request, async (record) => {
        const appended = await this.appender.append({ ...append, command: record }, request.trace);
        if (appended) return appended;
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

  /**
   * Changes the status and/or the subject, visitor, metadata and tags, under the conversation's
   * lock: a status move emits its transition event, a change of the other fields
   * `conversation.updated` (naming them, with the tags added and removed); values equal to the
   * stored ones change nothing and emit nothing.
   */
  update(request: RpcCall<typeof ConversationRpc.update>): Promise<ConversationView> {
    const { data: command, accountId } = request;
    return this.outbox.relayOnCommit(
      this.commands.applyOnce(request, async (tx) => {
        checkTagEdits(command);
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
            tags_added: edit.tags.added,
            tags_removed: edit.tags.removed,
          });
        }
        return toConversationView(current);
      }),
    );
  }

  /**
   * Deletes a conversation and everything stored about it in this service (docs/conversations.md,
   * "Deleting a conversation"): its messages, lead and events, its place in the analytics, and the
   * stored replies of commands that showed it. Then one `conversation.deleted` event, carrying
   * only the id, which the webhooks service reads to purge its own copies.
   */
  delete(request: RpcCall<typeof ConversationRpc.delete>): Promise<DeletedConversation> {
    const { data: command, accountId } = request;
    return this.outbox.relayOnCommit(
      this.commands.applyOnce(request, async (tx) => {
        const current = await this.conversations.lock(tx, accountId, command.conversationId);
        if (!current) throw notFound(command.conversationId);
        await this.conversations.erase(tx, accountId, current);
        await this.commands.erase(tx, accountId, current);
        await this.outbox.append(
          tx,
          request,
          { id: current.id, event_sequence: current.event_sequence + 1 },
          'conversation.deleted',
          { id: current.id },
        );
        return { id: current.id };
      }),
    );
  }

  /** A page of a conversation's messages: for conversations too long to read whole. */
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
      data: page.rows.map(({ position: _position, ...message }) => message),
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
   * What appending a message writes besides its command's record: the message with its new id,
   * and its event (`message.received` for a visitor's, `message.sent` for the others), whose
   * payload the append statement completes.
   */
  private messageAppend(
    cause: EventCause,
    conversationId: string,
    { sender, content }: NewMessage,
  ): Omit<MessageAppend, 'command'> {
    const envelope = eventEnvelope(cause, conversationId, messageEventType(sender));
    return {
      accountId: cause.accountId,
      conversationId,
      message: { id: randomUUID(), sender, content },
      event: { envelope, type: envelope.type, id: envelope.id },
    };
  }
}
