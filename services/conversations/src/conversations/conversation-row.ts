import type { ConversationStatus } from '@app/dialects';
import type { ConversationView, MessageView, VisitorView } from '@app/contracts';

/** A conversations row as the repository's SQL selects it (timestamps already ISO 8601 text). */
export interface ConversationRow {
  id: string;
  status: ConversationStatus;
  /** The visitor as the view has it (null without a name, email or phone): the SQL decides. */
  visitor: VisitorView | null;
  visitor_name: string | null;
  visitor_email: string | null;
  visitor_phone: string | null;
  subject: string | null;
  metadata: Record<string, unknown>;
  tags: string[];
  message_count: number;
  last_message_at: string | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  /** The `sequence` of its latest event: each statement that changes the row for an event bumps it. */
  event_sequence: number;
}

/** A messages row as the repository's SQL selects it: its view's fields, the view itself. */
export type MessageRow = MessageView;

export function toConversationView(row: ConversationRow): ConversationView {
  return {
    id: row.id,
    status: row.status,
    visitor: row.visitor,
    subject: row.subject,
    metadata: row.metadata,
    tags: row.tags,
    message_count: row.message_count,
    last_message_at: row.last_message_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    closed_at: row.closed_at,
  };
}
