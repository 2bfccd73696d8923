import { Body, Controller, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  CaptureLeadBody,
  ConversationId,
  ConversationRpc,
  CreateConversationBody,
  type CreateStatus,
  ListConversationsParams,
  ListMessagesParams,
  SendMessageBody,
  type Static,
  UpdateConversationBody,
} from '@app/contracts';
import { ConversationStatus, Dialect, parseStatus } from '@app/dialects';
import { retryWhileDatabaseUnavailable } from '@app/database';
import { RpcClient } from '@app/messaging';
import { ApiEndpoint } from '../http/endpoint';
import { IdempotencyRepository } from '../idempotency/idempotency.repository';
import { pageLimit, PathId } from '../http/path-params';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { conversationBody, pageBody } from './conversation-presenter';
import { ConversationEndpoints } from './conversations.endpoints';
import { listCommand, pageFilters } from './list-query';
import { MessageCursors } from './message-cursor';

/** A status the schema accepted, in any dialect, as the canonical value. */
const canonical = (status: string) => parseStatus(status) as ConversationStatus;

/** The conversations operations: each handler translates dialects and makes one RPC call. */
@Controller()
export class ConversationsController {
  constructor(
    private readonly rpc: RpcClient,
    private readonly cursors: MessageCursors,
    private readonly idempotency: IdempotencyRepository,
  ) {}

  @ApiEndpoint(ConversationEndpoints.list)
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof ListConversationsParams>,
    @Req() request: FastifyRequest,
  ) {
    const command = listCommand(query);
    return pageBody(await this.rpc.callForJson(ConversationRpc.list, call, command), dialect, {
      collectionPath: request.url.split('?')[0],
      filters: pageFilters(command),
    });
  }

  @ApiEndpoint(ConversationEndpoints.get)
  async get(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', ConversationId) conversationId: string,
  ) {
    const conversation = await this.rpc.callForJson(ConversationRpc.get, call, { conversationId });
    return conversationBody(conversation, dialect);
  }

  @ApiEndpoint(ConversationEndpoints.create)
  async create(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Body() body: Static<typeof CreateConversationBody>,
  ) {
    const { status, ...fields } = body;
    const command = {
      ...fields,
      ...(status !== undefined && { status: canonical(status) as CreateStatus }),
    };
    return conversationBody(await this.rpc.callForJson(ConversationRpc.create, call, command), dialect);
  }

  @ApiEndpoint(ConversationEndpoints.sendMessage)
  sendMessage(
    @Call() call: CallContext,
    @PathId('id', ConversationId) conversationId: string,
    @Body() body: Static<typeof SendMessageBody>,
  ) {
    return this.rpc.callForJson(ConversationRpc.sendMessage, call, { conversationId, ...body });
  }

  @ApiEndpoint(ConversationEndpoints.update)
  async update(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @PathId('id', ConversationId) conversationId: string,
    @Body() body: Static<typeof UpdateConversationBody>,
  ) {
    const { status, ...fields } = body;
    const command = {
      conversationId,
      ...fields,
      ...(status !== undefined && { status: canonical(status) }),
    };
    return conversationBody(await this.rpc.callForJson(ConversationRpc.update, call, command), dialect);
  }

  /**
   * The conversations service deletes the conversation and everything it stored about it (and
   * emits conversation.deleted, which the webhooks service purges by); then this gateway's stored
   * Idempotency-Key responses that showed it go.
   */
  @ApiEndpoint(ConversationEndpoints.delete)
  async delete(
    @Call() call: CallContext,
    @PathId('id', ConversationId) conversationId: string,
  ): Promise<void> {
    const { id } = await this.rpc.call(ConversationRpc.delete, call, { conversationId });
    await retryWhileDatabaseUnavailable(() => this.idempotency.eraseConversation(call.accountId, id));
  }

  @ApiEndpoint(ConversationEndpoints.listMessages)
  async listMessages(
    @Call() call: CallContext,
    @PathId('id', ConversationId) conversationId: string,
    @Query() query: Static<typeof ListMessagesParams>,
  ) {
    const order = query.order ?? 'asc';
    const limit = pageLimit(query);
    const { accountId } = call;
    const page = await this.rpc.call(ConversationRpc.listMessages, call, {
      conversationId,
      limit,
      order,
      ...(query.after !== undefined && {
        afterPosition: this.cursors.positionAfter(query.after, order, accountId, conversationId),
      }),
    });
    const { nextAfterPosition } = page;
    const next =
      nextAfterPosition === null
        ? null
        : this.cursors.seal(order, nextAfterPosition, accountId, conversationId);
    return { data: page.data, pagination: { limit, next } };
  }

  @ApiEndpoint(ConversationEndpoints.getLead)
  getLead(@Call() call: CallContext, @PathId('id', ConversationId) conversationId: string) {
    return this.rpc.callForJson(ConversationRpc.getLead, call, { conversationId });
  }

  @ApiEndpoint(ConversationEndpoints.captureLead)
  captureLead(
    @Call() call: CallContext,
    @PathId('id', ConversationId) conversationId: string,
    @Body() body: Static<typeof CaptureLeadBody>,
  ) {
    return this.rpc.callForJson(ConversationRpc.captureLead, call, { conversationId, ...body });
  }
}
