import { Body, Controller, Param, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  CaptureLeadBody,
  ChangeStatusBody,
  ConversationId,
  ConversationRpc,
  CreateConversationBody,
  ListConversationsParams,
  parseWith,
  SendMessageBody,
  type Static,
} from '@app/contracts';
import { ConversationStatus, Dialect, parseStatus } from '@app/dialects';
import { RpcClient } from '@app/messaging';
import { ApiEndpoint } from '../http/endpoint';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { presentConversation, presentPage } from './conversation-presenter';
import { ConversationEndpoints } from './conversations.endpoints';
import { listCommand } from './list-query';

/** A path id that is not a UUID names nothing: a 404 like an unknown id, after the body's 400s. */
const conversationId = (id: string) => parseWith(ConversationId, id, 'id').toLowerCase();
/** A status the schema accepted, in any dialect, as the canonical value. */
const canonical = (status: string) => parseStatus(status) as ConversationStatus;

/** The conversations operations: each handler translates dialects and makes one RPC call. */
@Controller()
export class ConversationsController {
  constructor(private readonly rpc: RpcClient) {}

  @ApiEndpoint(ConversationEndpoints.list)
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Static<typeof ListConversationsParams>,
    @Req() request: FastifyRequest,
  ) {
    const command = listCommand(query);
    const page = await this.rpc.call(ConversationRpc.list, call, command);
    return presentPage(page, dialect, request.url.split('?')[0], command.status);
  }

  @ApiEndpoint(ConversationEndpoints.get)
  async get(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    const conversation = await this.rpc.call(ConversationRpc.get, call, {
      conversationId: conversationId(id),
    });
    return presentConversation(conversation, dialect);
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
      ...(status !== undefined && { status: canonical(status) as 'active' | 'pending' }),
    };
    return presentConversation(await this.rpc.call(ConversationRpc.create, call, command), dialect);
  }

  @ApiEndpoint(ConversationEndpoints.sendMessage)
  sendMessage(
    @Call() call: CallContext,
    @Param('id') id: string,
    @Body() body: Static<typeof SendMessageBody>,
  ) {
    return this.rpc.call(ConversationRpc.sendMessage, call, { conversationId: conversationId(id), ...body });
  }

  @ApiEndpoint(ConversationEndpoints.changeStatus)
  async changeStatus(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Body() body: Static<typeof ChangeStatusBody>,
  ) {
    const command = { conversationId: conversationId(id), status: canonical(body.status) };
    return presentConversation(await this.rpc.call(ConversationRpc.changeStatus, call, command), dialect);
  }

  @ApiEndpoint(ConversationEndpoints.captureLead)
  captureLead(
    @Call() call: CallContext,
    @Param('id') id: string,
    @Body() body: Static<typeof CaptureLeadBody>,
  ) {
    return this.rpc.call(ConversationRpc.captureLead, call, { conversationId: conversationId(id), ...body });
  }
}
