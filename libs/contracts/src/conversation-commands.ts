import type { ConversationStatus } from '@app/dialects';
import type { MessageSender } from './conversation-views';

/** RPC patterns the conversations service answers. Payloads below travel inside an {@link RpcRequest}. */
export const ConversationPatterns = {
  list: 'conversations.list',
  get: 'conversations.get',
  create: 'conversations.create',
  sendMessage: 'conversations.send-message',
  changeStatus: 'conversations.change-status',
  captureLead: 'conversations.capture-lead',
} as const;
export type ConversationPattern = (typeof ConversationPatterns)[keyof typeof ConversationPatterns];

export interface ListConversationsQuery {
  limit: number;
  offset: number;
  status?: ConversationStatus;
  /** A sealed snapshot token (see list-snapshot.ts): rows created by transactions it does not see are hidden. */
  snapshot?: string;
}

export interface GetConversationQuery {
  conversationId: string;
}

export interface NewMessage {
  content: string;
  sender: MessageSender;
}

export interface CreateConversationCommand {
  visitor?: { name?: string | null; email?: string | null; phone?: string | null } | null;
  subject?: string | null;
  metadata?: Record<string, unknown>;
  status?: Extract<ConversationStatus, 'active' | 'pending'>;
  message?: NewMessage;
}

export interface SendMessageCommand extends NewMessage {
  conversationId: string;
}

export interface ChangeStatusCommand {
  conversationId: string;
  status: ConversationStatus;
}

export interface CaptureLeadCommand {
  conversationId: string;
  name?: string | null;
  email?: string | null;
  phone?: string | null;
}
