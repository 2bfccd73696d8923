import { CONVERSATION_STATUSES, ConversationStatus } from '@app/dialects';
import { DOMAIN_EVENT_TYPES } from '@app/contracts';
import { transitionEvent } from './status-transitions';

/** The documented transitions (docs/conversations.md): every (from, to) pair and what it must do. Same status is handled before the table. */
const EXPECTED: Array<[ConversationStatus, ConversationStatus, string | undefined]> = [
  ['active', 'pending', 'conversation.status_changed'],
  ['pending', 'active', 'conversation.status_changed'],
  ['active', 'closed', 'conversation.closed'],
  ['pending', 'closed', 'conversation.closed'],
  ['closed', 'active', 'conversation.reopened'],
  ['closed', 'pending', undefined],
  ['active', 'active', undefined],
  ['pending', 'pending', undefined],
  ['closed', 'closed', undefined],
];

describe('transitionEvent', () => {
  it('the expectation table covers every pair of statuses', () => {
    const pairs = new Set(EXPECTED.map(([from, to]) => `${from}>${to}`));
    expect(pairs.size).toBe(CONVERSATION_STATUSES.length ** 2);
  });

  it.each(EXPECTED)('%s -> %s emits %s', (from, to, event) => {
    expect(transitionEvent(from, to)).toBe(event);
  });

  it('only ever names published domain event types', () => {
    for (const from of CONVERSATION_STATUSES) {
      for (const to of CONVERSATION_STATUSES) {
        const event = transitionEvent(from, to);
        if (event !== undefined) expect(DOMAIN_EVENT_TYPES).toContain(event);
      }
    }
  });

  it('has no entry for a status name outside the canonical three', () => {
    expect(transitionEvent('active', 'aktif' as ConversationStatus)).toBeUndefined();
  });
});
