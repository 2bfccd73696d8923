/** Injection tokens for values built before Nest starts (configuration, logger, broker connection). */
export const WEBHOOKS_CONFIG = Symbol('WEBHOOKS_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const AMQP_CONNECTION = Symbol('AMQP_CONNECTION');
/** Tells dispatchers that work is due now (a test send, a manual retry). */
export const DUE_CHANNEL = 'webhooks_due';
/** Payload: a subscription id whose settings changed or which was deleted. */
export const SUBSCRIPTION_CHANGED_CHANNEL = 'webhooks_subscription_changed';
