import type { ConversationStatus } from '@app/dialects';

export const MESSAGE_SENDERS = ['agent', 'visitor', 'bot', 'system'] as const;
export type MessageSender = (typeof MESSAGE_SENDERS)[number];

export const MESSAGE_CONTENT_MAX = 10_000;

export interface VisitorView {
  name: string | null;
  email: string | null;
  phone: string | null;
}

export interface MessageView {
  id: string;
  conversation_id: string;
  sender: MessageSender;
  content: string;
  created_at: string;
}

/** A conversation as the conversations service returns it: canonical (en) status. */
export interface ConversationView {
  id: string;
  status: ConversationStatus;
  visitor: VisitorView | null;
  subject: string | null;
  metadata: Record<string, unknown>;
  message_count: number;
  last_message_at: string | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

export interface ConversationWithMessagesView extends ConversationView {
  messages: MessageView[];
}

export interface ConversationPage {
  data: ConversationView[];
  pagination: { limit: number; offset: number; total: number; snapshot: string };
}

export interface LeadView {
  id: string;
  conversation_id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  created_at: string;
}
