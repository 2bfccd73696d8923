import type { Options } from 'amqplib';

/**
 * Both ends assert the RPC queue with exactly these options (RabbitMQ refuses a redeclaration
 * that differs). Durable so it outlives a broker restart; commands themselves are transient with
 * a TTL equal to the caller's timeout, so nobody runs a command whose caller has given up waiting.
 */
export const RPC_QUEUE_OPTIONS: Options.AssertQueue = { durable: true };

export const DIRECT_REPLY_QUEUE = 'amq.rabbitmq.reply-to';

export const PRESENCE_EXCHANGE_OPTIONS: Options.AssertExchange = { durable: true };
