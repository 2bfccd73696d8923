import {
  CaptureLeadBody,
  ChangeStatusBody,
  ConversationListResponse,
  ConversationResponse,
  ConversationWithMessagesResponse,
  CreateConversationBody,
  LeadView,
  ListConversationsParams,
  MessageView,
  SendMessageBody,
} from '@app/contracts';
import { LIST_QUERY_ALIASES } from '@app/dialects';
import type { Endpoint } from '../http/endpoint';

const ID = { id: 'Conversation id.' };
const BODY_PROBLEMS = [
  'validation_failed',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
] as const;
const KEY_PROBLEMS = ['idempotency_key_reused', 'idempotency_key_in_use'] as const;

/** The conversations operations of the interface (section 4), in both path renderings. */
export const ConversationEndpoints = {
  list: {
    operationId: 'listConversations',
    method: 'GET',
    path: '/v1/conversations',
    tag: 'conversations',
    summary: 'List conversations, newest first',
    description:
      'Pages are read as of the first page (`snapshot`), so offsets do not shift while others create conversations. Parameter names may be Malay (`had`, `mengimbangi`) or Polish (`przesunięcie`, `stan`); status values any dialect.',
    query: ListConversationsParams,
    queryAliases: LIST_QUERY_ALIASES,
    status: 200,
    response: ConversationListResponse,
    problems: ['validation_failed'],
  },
  get: {
    operationId: 'getConversation',
    method: 'GET',
    path: '/v1/conversations/{id}',
    tag: 'conversations',
    summary: 'Get one conversation with all its messages',
    pathParams: ID,
    status: 200,
    response: ConversationWithMessagesResponse,
    problems: ['not_found'],
  },
  create: {
    operationId: 'createConversation',
    method: 'POST',
    path: '/v1/conversations',
    tag: 'conversations',
    summary: 'Start a conversation (emits conversation.started)',
    description: 'Every field is optional: an empty body starts an active conversation without a visitor.',
    body: CreateConversationBody,
    idempotent: true,
    status: 201,
    response: ConversationResponse,
    problems: [...BODY_PROBLEMS, ...KEY_PROBLEMS],
  },
  sendMessage: {
    operationId: 'sendMessage',
    method: 'POST',
    path: '/v1/conversations/{id}/messages',
    tag: 'conversations',
    summary: 'Send a message (a visitor message emits message.received)',
    pathParams: ID,
    body: SendMessageBody,
    bodyRequired: true,
    idempotent: true,
    status: 201,
    response: MessageView,
    problems: [...BODY_PROBLEMS, 'not_found', 'conversation_closed', ...KEY_PROBLEMS],
  },
  changeStatus: {
    operationId: 'changeConversationStatus',
    method: 'PATCH',
    path: '/v1/conversations/{id}',
    tag: 'conversations',
    summary:
      'Change status: active<->pending, active|pending->closed (emits conversation.closed), closed->active',
    description: 'The same status again is a no-op 200; any other move is 409 `invalid_transition`.',
    pathParams: ID,
    body: ChangeStatusBody,
    bodyRequired: true,
    status: 200,
    response: ConversationResponse,
    problems: [...BODY_PROBLEMS, 'not_found', 'invalid_transition'],
  },
  captureLead: {
    operationId: 'captureLead',
    method: 'POST',
    path: '/v1/conversations/{id}/lead',
    tag: 'conversations',
    summary: "Capture the visitor's contact details (emits lead.captured)",
    pathParams: ID,
    body: CaptureLeadBody,
    bodyRequired: true,
    idempotent: true,
    status: 201,
    response: LeadView,
    problems: [...BODY_PROBLEMS, 'not_found', ...KEY_PROBLEMS],
  },
} satisfies Record<string, Endpoint>;
