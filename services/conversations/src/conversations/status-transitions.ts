import type { ConversationStatus } from '@app/dialects';
import type { DomainEventType } from '@app/contracts';

/**
 * The allowed moves (docs/conversations.md) and the event each one emits. A move to the same
 * status is a no-op and is handled before this table is consulted.
 */
const TRANSITIONS: Record<ConversationStatus, Partial<Record<ConversationStatus, DomainEventType>>> = {
  active: { pending: 'conversation.status_changed', closed: 'conversation.closed' },
  pending: { active: 'conversation.status_changed', closed: 'conversation.closed' },
  closed: { active: 'conversation.reopened' },
};

export function transitionEvent(
  from: ConversationStatus,
  to: ConversationStatus,
): DomainEventType | undefined {
  return TRANSITIONS[from][to];
}
