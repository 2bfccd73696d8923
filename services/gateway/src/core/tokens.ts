/** Injection tokens of the gateway's shared providers (GatewayCoreModule). */
export const GATEWAY_LOGGER = Symbol('GATEWAY_LOGGER');
export const AMQP_CONNECTION = Symbol('AMQP_CONNECTION');
/** The Redis connection in subscriber mode (account changes); REDIS is the limiter's. */
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');
