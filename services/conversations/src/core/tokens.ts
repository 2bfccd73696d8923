/** Injection tokens for values built before Nest starts (configuration, logger, broker connection). */
export const CONVERSATIONS_CONFIG = Symbol('CONVERSATIONS_CONFIG');
export const LOGGER = Symbol('LOGGER');
export const AMQP_CONNECTION = Symbol('AMQP_CONNECTION');
