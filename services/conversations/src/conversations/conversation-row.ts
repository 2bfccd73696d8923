import type { ConversationStatus } from '@app/dialects';
import type { ConversationView, MessageSender, MessageView } from '@app/contracts';

/** A conversations row as the repository's SQL selects it (timestamps already ISO 8601 text). */
export interface ConversationRow {
  id: string;
  status: ConversationStatus;
  visitor_name: string | null;
  visitor_email: string | null;
  visitor_phone: string | null;
  subject: string | null;
  metadata: Record<string, unknown>;
  message_count: number;
  last_message_at: string | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  /** The `sequence` of its latest event: each statement that changes the row for an event bumps it. */
  event_sequence: number;
}

export interface MessageRow {
  id: string;
  conversation_id: string;
  sender: MessageSender;
  content: string;
  created_at: string;
}

export function toConversationView(row: ConversationRow): ConversationView {
  const hasVisitor = row.visitor_name !== null || row.visitor_email !== null || row.visitor_phone !== null;
  return {
    id: row.id,
    status: row.status,
    visitor: hasVisitor
      ? { name: row.visitor_name, email: row.visitor_email, phone: row.visitor_phone }
      : null,
    subject: row.subject,
    metadata: row.metadata,
    message_count: row.message_count,
    last_message_at: row.last_message_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    closed_at: row.closed_at,
  };
}

export const toMessageView = (row: MessageRow): MessageView => ({ ...row });
