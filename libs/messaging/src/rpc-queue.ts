import type { Options } from 'amqplib';
import { brokerUrls } from './amqp-connection';
import { QUORUM_QUEUE_ARGUMENTS, type QueueDeclaration } from './queue-declaration';

/**
 * What an RPC queue is. Commands are transient (their caller waits at most RPC_TIMEOUT_MS, and a
 * lost one is answered 503/504 and retried under its Idempotency-Key), so on one broker a classic
 * queue, which keeps them in memory, is enough; on a cluster the queue must outlive a node, and a
 * quorum queue does, at the price of writing every command to its Raft log (about 150 us of
 * broker CPU per command, BENCHMARKS.md).
 */
export type RpcQueueType = 'classic' | 'quorum';

/** `auto` (the default): quorum when AMQP_URL names several nodes, classic for one broker. */
export function rpcQueueType(config: {
  RPC_QUEUE_TYPE: RpcQueueType | 'auto';
  AMQP_URL: string;
}): RpcQueueType {
  if (config.RPC_QUEUE_TYPE !== 'auto') return config.RPC_QUEUE_TYPE;
  return brokerUrls(config.AMQP_URL).length > 1 ? 'quorum' : 'classic';
}

/**
 * Both ends assert the RPC queue with exactly these options (RabbitMQ refuses a redeclaration
 * that differs; a service finding the other type moves the queue, see quorum-migration.ts).
 * Commands carry a TTL equal to the caller's timeout, so nobody runs a command whose caller has
 * given up waiting (quorum queues honour per-message TTL since RabbitMQ 3.10).
 */
export function rpcQueueOptions(type: RpcQueueType): Options.AssertQueue {
  return type === 'quorum' ? { durable: true, arguments: QUORUM_QUEUE_ARGUMENTS } : { durable: true };
}

/** Dead-letter queues keep what could not be handled, so they are replicated like the queues they serve. */
export const DEAD_LETTER_QUEUE_OPTIONS: Options.AssertQueue = {
  durable: true,
  arguments: QUORUM_QUEUE_ARGUMENTS,
};

export const DIRECT_REPLY_QUEUE = 'amq.rabbitmq.reply-to';

export const PRESENCE_EXCHANGE_OPTIONS: Options.AssertExchange = { durable: true };

/** An RPC queue and its dead-letter queue as declared by the service that serves them. */
export function rpcQueueDeclarations(
  queues: { queue: string; deadLetterQueue?: string },
  type: RpcQueueType,
): QueueDeclaration[] {
  return [
    { name: queues.queue, options: rpcQueueOptions(type) },
    ...(queues.deadLetterQueue ? [{ name: queues.deadLetterQueue, options: DEAD_LETTER_QUEUE_OPTIONS }] : []),
  ];
}
