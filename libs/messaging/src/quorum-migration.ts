import { setTimeout as sleep } from 'node:timers/promises';
import amqplib, { type Channel, type ChannelModel, type ConfirmChannel, type GetMessage } from 'amqplib';
import type { Logger } from 'pino';
import { brokerUrls } from './amqp-connection';
import {
  assertDeclared,
  bindToExchanges,
  isStream,
  QUORUM_QUEUE_ARGUMENTS,
  type QueueDeclaration,
} from './queue-declaration';

/** Held (an exclusive queue) by the one process migrating, so two replicas never move the same queue. */
const LOCK_QUEUE = 'cms.queue-migration.lock';
const PRECONDITION_FAILED = 406;
const RESOURCE_LOCKED = 405;
const RETRY_MS = 1000;
const COPY_BATCH = 200;

/**
 * Makes sure every queue exists with its declared arguments, moving an older declaration of it
 * (a classic queue before quorum queues, or an RPC queue whose RPC_QUEUE_TYPE changed) without
 * losing a message. RabbitMQ cannot change a
 * queue's type, and redeclaring it with other arguments fails with PRECONDITION_FAILED, so:
 * copy its messages into `<name>.migrating` (bound like it, so published events keep arriving),
 * delete it once empty and unused, declare it anew, move the messages back. Each message is
 * acknowledged on the old queue only after the broker confirmed its copy: a crash half-way leaves
 * duplicates at worst, never a gap, and the next start finishes the job. Gives up after
 * `timeoutMs` (old consumers still attached, say): the process exits and is restarted.
 * A stream is never moved (its history is what it is for, and it cannot be read with basic.get):
 * one declared before with other arguments is kept as it is, bound, with a warning.
 */
export async function declareQueues(
  amqpUrl: string,
  queues: QueueDeclaration[],
  logger: Logger,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const connection = await connectToAny(brokerUrls(amqpUrl));
  try {
    await withLock(connection, deadline, async () => {
      for (const queue of queues) await declareQueue(connection, queue, deadline, logger);
    });
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function connectToAny(urls: string[]): Promise<ChannelModel> {
  let lastError: unknown;
  for (const url of urls) {
    try {
      const connection = await amqplib.connect(url);
      connection.on('error', () => undefined); // surfaces as the failed operation
      return connection;
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
}

async function withLock(
  connection: ChannelModel,
  deadline: number,
  work: () => Promise<void>,
): Promise<void> {
  for (;;) {
    const channel = await quietChannel(connection);
    try {
      await channel.assertQueue(LOCK_QUEUE, { exclusive: true, autoDelete: true });
      break;
    } catch (error) {
      if (errorCode(error) !== RESOURCE_LOCKED || Date.now() > deadline) throw error;
      await sleep(RETRY_MS);
    }
  }
  await work();
}

async function declareQueue(
  connection: ChannelModel,
  queue: QueueDeclaration,
  deadline: number,
  logger: Logger,
): Promise<void> {
  const temporary: QueueDeclaration = { ...queue, name: `${queue.name}.migrating` };
  if (await tryDeclare(connection, queue)) {
    // A migration interrupted after the redeclaration may have left messages in the temporary queue.
    if (await exists(connection, temporary.name)) await drainInto(connection, temporary, queue.name, logger);
    return;
  }
  if (isStream(queue)) return keepStream(connection, queue, logger);
  logger.warn({ queue: queue.name }, 'queue declared with other arguments: moving its messages');
  const channel = await quietChannel(connection);
  await assertDeclared(channel, temporary);
  await channel.close();
  for (;;) {
    await copyAll(connection, queue.name, temporary.name);
    if (await deleteIfDrained(connection, queue.name)) break;
    if (Date.now() > deadline)
      throw new Error(`queue ${queue.name} still has consumers; stop the old version`);
    await sleep(RETRY_MS);
  }
  if (!(await tryDeclare(connection, queue))) throw new Error(`queue ${queue.name} could not be redeclared`);
  await drainInto(connection, temporary, queue.name, logger);
}

async function keepStream(connection: ChannelModel, stream: QueueDeclaration, logger: Logger): Promise<void> {
  const channel = await quietChannel(connection);
  await bindToExchanges(channel, stream);
  await channel.close();
  logger.warn(
    { queue: stream.name, wanted: stream.options.arguments },
    'stream declared before with other arguments: kept as it is (change its retention with a RabbitMQ policy)',
  );
}

/** Unbinds the temporary queue, moves what it holds into `target`, deletes it. */
async function drainInto(
  connection: ChannelModel,
  temporary: QueueDeclaration,
  target: string,
  logger: Logger,
) {
  const channel = await quietChannel(connection);
  for (const { exchange, pattern } of temporary.bindings ?? [])
    await channel.unbindQueue(temporary.name, exchange, pattern);
  await channel.close();
  const moved = await copyAll(connection, temporary.name, target);
  // Nothing consumes or routes to it any more (quorum queues refuse a conditional delete).
  const cleanup = await quietChannel(connection);
  await cleanup.deleteQueue(temporary.name);
  await cleanup.close();
  logger.warn({ queue: target, moved }, 'queue migrated');
}

/**
 * Moves every message from `source` to `target`, acknowledging each after the broker confirmed its
 * copy; in batches, since a quorum queue confirms only once its replicas wrote to disk.
 */
async function copyAll(connection: ChannelModel, source: string, target: string): Promise<number> {
  const channel: ConfirmChannel = await connection.createConfirmChannel();
  let moved = 0;
  try {
    for (;;) {
      const batch: GetMessage[] = [];
      for (let message = await channel.get(source); message;) {
        channel.sendToQueue(target, message.content, { ...message.properties, persistent: true });
        batch.push(message);
        message = batch.length < COPY_BATCH ? await channel.get(source) : false;
      }
      if (batch.length === 0) return moved;
      await channel.waitForConfirms();
      for (const message of batch) channel.ack(message);
      moved += batch.length;
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
}

async function tryDeclare(connection: ChannelModel, queue: QueueDeclaration): Promise<boolean> {
  const channel = await quietChannel(connection);
  try {
    await assertDeclared(channel, queue);
    await channel.close();
    return true;
  } catch (error) {
    if (errorCode(error) === PRECONDITION_FAILED) return false;
    throw error;
  }
}

async function exists(connection: ChannelModel, name: string): Promise<boolean> {
  const channel = await quietChannel(connection);
  try {
    await channel.checkQueue(name);
    await channel.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Deletes the queue only if it is empty and nobody consumes it (an old replica still running).
 * A classic queue does so atomically. A quorum queue refuses the conditional delete (closing the
 * whole connection), so it is checked, then deleted: a message published in between is lost. Only
 * RPC queues ever move away from quorum (RPC_QUEUE_TYPE), and a command lost so is answered 504
 * to its caller, who retries it under its Idempotency-Key.
 */
async function deleteIfDrained(connection: ChannelModel, name: string): Promise<boolean> {
  const quorum = await isQuorumQueue(connection, name);
  const channel = await quietChannel(connection);
  try {
    if (quorum) {
      const { messageCount, consumerCount } = await channel.checkQueue(name);
      if (messageCount > 0 || consumerCount > 0) return false;
      await channel.deleteQueue(name);
    } else {
      await channel.deleteQueue(name, { ifEmpty: true, ifUnused: true });
    }
    return true;
  } catch (error) {
    if (errorCode(error) === PRECONDITION_FAILED) return false;
    throw error;
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/** Redeclaring a queue with its own arguments succeeds, so this succeeds for a quorum queue only. */
function isQuorumQueue(connection: ChannelModel, name: string): Promise<boolean> {
  return tryDeclare(connection, { name, options: { durable: true, arguments: QUORUM_QUEUE_ARGUMENTS } });
}

/** A channel whose broker-side closure (the expected PRECONDITION_FAILED) is not an unhandled 'error'. */
async function quietChannel(connection: ChannelModel): Promise<Channel> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  return channel;
}

function errorCode(error: unknown): number | undefined {
  return (error as { code?: number }).code;
}
