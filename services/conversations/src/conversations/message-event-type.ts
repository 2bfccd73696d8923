import type { MessageSender } from '@app/contracts';

/** Visitors' messages are `message.received` (a public event); everyone else's `message.sent`. */
export const messageEventType = (sender: MessageSender) =>
  sender === 'visitor' ? 'message.received' : 'message.sent';
