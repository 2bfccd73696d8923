import { Body, Controller, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { ALL_STATUS_SPELLINGS, ConversationStatus, Dialect, parseStatus } from '@app/dialects';
import { DomainError } from '@app/errors';
import { ApiProblems } from '../http/api-problems.decorator';
import { Call, CallContext, OutputDialect } from '../http/request-state';
import { presentConversation, presentPage } from './conversation-presenter';
import { ConversationsClient } from './conversations.client';
import {
  CaptureLeadDto,
  ChangeStatusDto,
  CreateConversationDto,
  SendMessageDto,
} from './dto/conversation-bodies.dto';
import {
  ConversationListResponse,
  ConversationResponse,
  ConversationWithMessagesResponse,
  LeadResponse,
  MessageResponse,
} from './dto/conversation-responses.dto';
import { parseListQuery } from './list-query';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDEMPOTENCY_HEADER = {
  name: 'Idempotency-Key',
  required: false,
  description:
    'Retry-safe key (up to 255 printable ASCII characters); the first response is replayed for 24 h.',
};
const ID_PARAM = { name: 'id', format: 'uuid', description: 'Conversation id.' };

/** Any id that is not a UUID names nothing: a 404 like an unknown or foreign id, never a 400. */
function conversationId(id: string): string {
  if (!UUID.test(id)) throw new DomainError('not_found', `Conversation ${id.slice(0, 64)} was not found.`);
  return id.toLowerCase();
}

function bodyStatus(text: string, allowed: readonly ConversationStatus[]): ConversationStatus {
  const status = parseStatus(text);
  if (!status || !allowed.includes(status)) {
    throw DomainError.validation([
      { field: 'status', message: `must be one of: ${ALL_STATUS_SPELLINGS.join(', ')}` },
    ]);
  }
  return status;
}

@ApiTags('conversations')
@ApiBearerAuth()
@Controller(['v1/conversations', 'v1/rozmowy'])
export class ConversationsController {
  constructor(private readonly conversations: ConversationsClient) {}

  @Get()
  @ApiOperation({ summary: 'List conversations, newest first' })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: 'Page size 1..100 (alias `had`).',
    schema: { type: 'integer', default: 20 },
  })
  @ApiQuery({
    name: 'offset',
    required: false,
    description: 'Rows to skip (aliases `mengimbangi`, `przesunięcie`).',
    schema: { type: 'integer', default: 0 },
  })
  @ApiQuery({
    name: 'status',
    required: false,
    description: 'Filter in any dialect (alias `stan`).',
    enum: ALL_STATUS_SPELLINGS,
  })
  @ApiQuery({
    name: 'snapshot',
    required: false,
    description: '`pagination.snapshot` of the first page.',
    schema: { type: 'string' },
  })
  @ApiOkResponse({ type: ConversationListResponse })
  @ApiProblems('validation_failed')
  async list(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Query() query: Record<string, string | string[]>,
    @Req() request: FastifyRequest,
  ) {
    const parsed = parseListQuery(query);
    const page = await this.conversations.list(call, parsed);
    return presentPage(page, dialect, request.url.split('?')[0], parsed.status);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one conversation with all its messages' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ConversationWithMessagesResponse })
  @ApiProblems('not_found')
  async get(@Call() call: CallContext, @OutputDialect() dialect: Dialect, @Param('id') id: string) {
    return presentConversation(await this.conversations.get(call, conversationId(id)), dialect);
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Start a conversation (emits conversation.started)' })
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiCreatedResponse({ type: ConversationResponse })
  @ApiProblems(
    'validation_failed',
    'invalid_json',
    'payload_too_large',
    'unsupported_media_type',
    'idempotency_key_reused',
    'idempotency_key_in_use',
  )
  async create(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Body() body: CreateConversationDto,
  ) {
    const status = body.status == null ? undefined : bodyStatus(body.status, ['active', 'pending']);
    const created = await this.conversations.create(call, {
      visitor: body.visitor,
      subject: body.subject,
      metadata: body.metadata,
      message: body.message && { content: body.message.content, sender: body.message.sender },
      ...(status && { status: status as 'active' | 'pending' }),
    });
    return presentConversation(created, dialect);
  }

  @Post([':id/messages', ':id/wiadomości'])
  @HttpCode(201)
  @ApiOperation({ summary: 'Send a message (a visitor message emits message.received)' })
  @ApiParam(ID_PARAM)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiCreatedResponse({ type: MessageResponse })
  @ApiProblems(
    'validation_failed',
    'invalid_json',
    'not_found',
    'conversation_closed',
    'payload_too_large',
    'unsupported_media_type',
    'idempotency_key_reused',
    'idempotency_key_in_use',
  )
  sendMessage(@Call() call: CallContext, @Param('id') id: string, @Body() body: SendMessageDto) {
    return this.conversations.sendMessage(call, {
      conversationId: conversationId(id),
      content: body.content,
      sender: body.sender,
    });
  }

  @Patch(':id')
  @ApiOperation({
    summary:
      'Change status: active<->pending, active|pending->closed (emits conversation.closed), closed->active',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ConversationResponse })
  @ApiProblems(
    'validation_failed',
    'invalid_json',
    'not_found',
    'invalid_transition',
    'payload_too_large',
    'unsupported_media_type',
  )
  async changeStatus(
    @Call() call: CallContext,
    @OutputDialect() dialect: Dialect,
    @Param('id') id: string,
    @Body() body: ChangeStatusDto,
  ) {
    const status = bodyStatus(body.status, ['active', 'pending', 'closed']);
    const target = conversationId(id);
    return presentConversation(
      await this.conversations.changeStatus(call, { conversationId: target, status }),
      dialect,
    );
  }

  @Post(':id/lead')
  @HttpCode(201)
  @ApiOperation({ summary: "Capture the visitor's contact details (emits lead.captured)" })
  @ApiParam(ID_PARAM)
  @ApiHeader(IDEMPOTENCY_HEADER)
  @ApiCreatedResponse({ type: LeadResponse })
  @ApiProblems(
    'validation_failed',
    'invalid_json',
    'not_found',
    'payload_too_large',
    'unsupported_media_type',
    'idempotency_key_reused',
    'idempotency_key_in_use',
  )
  captureLead(@Call() call: CallContext, @Param('id') id: string, @Body() body: CaptureLeadDto) {
    return this.conversations.captureLead(call, {
      conversationId: conversationId(id),
      name: body.name,
      email: body.email,
      phone: body.phone,
    });
  }
}
