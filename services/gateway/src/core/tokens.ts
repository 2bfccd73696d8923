/**
 * Injection tokens of the gateway's shared providers, which GatewayCoreModule and RpcModule
 * provide. The bottom of the gateway: every feature may import it, it imports nothing of theirs.
 */

/** The gateway's validated configuration. */
export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');
export const GATEWAY_LOGGER = Symbol('GATEWAY_LOGGER');
export const AMQP_CONNECTION = Symbol('AMQP_CONNECTION');
/** The rate limiter's Redis connection (`connectRedis`: no offline queue, no retries). */
export const REDIS = Symbol('REDIS');
/** The Redis connection in subscriber mode (account changes); REDIS is the limiter's. */
export const REDIS_SUBSCRIBER = Symbol('REDIS_SUBSCRIBER');
/** The RpcClient on `webhooks.rpc` (the class token itself is the conversations service's). */
export const WEBHOOKS_RPC = Symbol('WEBHOOKS_RPC');
