/** Names on the broker. A published name never changes: other teams bind to them. */
export const CONVERSATIONS_RPC_QUEUE = 'conversations.rpc';
export const CONVERSATIONS_RPC_DEAD_LETTER_QUEUE = 'conversations.rpc.dead-letter';
export const CONVERSATIONS_EVENTS_EXCHANGE = 'conversations.events';
/** A RabbitMQ stream bound to every event: internal teams replay it from the start, a time or an offset. */
export const CONVERSATIONS_EVENTS_STREAM = 'conversations.events.stream';
/** Fanout on which an RPC consumer announces it stopped consuming, so callers re-check at once. */
export const CONVERSATIONS_RPC_PRESENCE_EXCHANGE = 'conversations.rpc.presence';
