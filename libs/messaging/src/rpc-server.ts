import { CustomTransportStrategy, MessageHandler, Server } from '@nestjs/microservices';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import { isObservable, lastValueFrom } from 'rxjs';
import type { Logger } from 'pino';
import {
  compileSerializer,
  encodeOkReply,
  JsonText,
  parseWith,
  type RpcOperation,
  type RpcReply,
  type RpcRequest,
} from '@app/contracts';
import { DomainError, ERROR_CATALOGUE } from '@app/errors';
import { contextFrom, contextOf, endSpan, SpanKind, startSpan } from '@app/observability';
import { Acknowledgements } from './acknowledgements';
import { consumer } from './consumer';
import type { DirectReplies } from './direct-replies';
import type { RpcCommandOutcome, RpcServerMetrics } from './rpc-metrics';
import {
  DEAD_LETTER_QUEUE_OPTIONS,
  PRESENCE_EXCHANGE_OPTIONS,
  rpcQueueOptions,
  type RpcQueueType,
} from './rpc-queue';

/**
 * How infrastructure failures are met (the runtime supplies the database's): which reads are
 * retried, and which failures are an outage the caller should retry rather than a bug.
 */
export interface RpcFailurePolicy {
  /** Runs a read-only operation, retrying what is transient until `answerBy` (epoch ms, if set). */
  retryRead<T>(call: () => Promise<T>, answerBy: number | undefined): Promise<T>;
  /** The domain error (a 503) an outage means, or undefined for any other failure. */
  outage(error: unknown): DomainError | undefined;
}

const INTERNAL_ERROR: RpcReply = {
  ok: false,
  error: { code: 'internal_error', detail: 'The request could not be completed.' },
};

const NO_FAILURE_POLICY: RpcFailurePolicy = {
  retryRead: (call) => call(),
  outage: () => undefined,
};

export interface RpcServerOptions {
  connection: AmqpConnectionManager;
  /** Where the replies to redelivered commands go out: a connection of their own. */
  replies: DirectReplies;
  queue: string;
  queueType: RpcQueueType;
  deadLetterQueue: string;
  /** Fanout exchange on which close() announces that this consumer left the queue. */
  presenceExchange: string;
  prefetch: number;
  /** The operations this service answers (e.g. `[ConversationRpc, AnalyticsRpc]`): their commands are validated here. */
  operations: Array<Record<string, RpcOperation>>;
  logger: Logger;
  /** How long close() waits for in-flight commands before giving up on them (they are redelivered). */
  drainTimeoutMs?: number;
  metrics?: RpcServerMetrics;
  failures?: RpcFailurePolicy;
}

/**
 * A NestJS transport that serves `@MessagePattern` handlers from a durable RabbitMQ queue.
 *
 * Unlike the stock RMQ transport it acknowledges each command only after its handler has finished
 * (so after the database commit) and its reply is sent (a redelivered command's on a connection of
 * its own, see DirectReplies), bounds the unacknowledged commands with a
 * prefetch, dead-letters what it cannot parse, answers commands with no handler instead of leaving
 * them unacknowledged, and drains in-flight work on close().
 */
export class RpcServer extends Server implements CustomTransportStrategy {
  private channel?: ChannelWrapper;
  private readonly consumerTags = new Map<Channel, string>();
  private readonly acknowledgements = new Map<Channel, Acknowledgements>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly handlers = new Map<string, MessageHandler>();
  private readonly operations: Map<string, RpcOperation>;
  /** Each operation's reply data serializer, compiled from its reply schema. */
  private readonly serializers: Map<string, (data: unknown) => string>;

  constructor(private readonly options: RpcServerOptions) {
    super();
    const operations = options.operations.flatMap((group) => Object.values(group));
    this.operations = new Map(operations.map((operation) => [operation.pattern, operation]));
    this.serializers = new Map(
      operations.map((operation) => [operation.pattern, compileSerializer(operation.reply)]),
    );
  }

  listen(callback: (error?: unknown) => void): void {
    const { connection, queue, queueType, deadLetterQueue, prefetch } = this.options;
    this.channel = connection.createChannel({
      name: `rpc-server:${queue}`,
      confirm: false,
      setup: async (channel: Channel) => {
        await channel.assertQueue(queue, rpcQueueOptions(queueType));
        await channel.assertQueue(deadLetterQueue, DEAD_LETTER_QUEUE_OPTIONS);
        await channel.assertExchange(this.options.presenceExchange, 'fanout', PRESENCE_EXCHANGE_OPTIONS);
        await channel.prefetch(prefetch);
        const acknowledgements = new Acknowledgements(channel, (error) =>
          this.options.logger.warn({ err: error.message }, 'could not acknowledge RPC commands'),
        );
        this.acknowledgements.set(channel, acknowledgements);
        const { consumerTag } = await channel.consume(
          queue,
          consumer(channel, (message) => {
            acknowledgements.delivered(message);
            this.track(acknowledgements, channel, message);
          }),
          { noAck: false },
        );
        this.consumerTags.set(channel, consumerTag);
        channel.once('close', () => {
          this.consumerTags.delete(channel);
          this.acknowledgements.delete(channel);
        });
      },
    });
    this.channel.waitForConnect().then(() => callback(), callback);
  }

  /**
   * Stops consuming, tells callers (so that, if this was the last consumer, they answer 503 at
   * once instead of timing out), waits for in-flight commands to finish and be acknowledged,
   * then closes.
   */
  async close(): Promise<void> {
    for (const [channel, tag] of this.consumerTags) {
      await channel.cancel(tag).catch(() => undefined);
      try {
        channel.publish(this.options.presenceExchange, '', Buffer.from(this.options.queue));
      } catch {
        // channel already closed: callers notice through their periodic consumer check
      }
    }
    const drained = Promise.allSettled([...this.inFlight]);
    const timeout = new Promise((resolve) =>
      setTimeout(resolve, this.options.drainTimeoutMs ?? 10_000).unref(),
    );
    await Promise.race([drained, timeout]);
    for (const acknowledgements of this.acknowledgements.values()) acknowledgements.flush();
    await this.channel?.close().catch(() => undefined);
  }

  on(): never {
    throw new Error('RpcServer does not emit events');
  }

  unwrap<T>(): T {
    return this.channel as T;
  }

  private track(acknowledgements: Acknowledgements, channel: Channel, message: ConsumeMessage): void {
    const work = this.handle(acknowledgements, channel, message).finally(() => this.inFlight.delete(work));
    this.inFlight.add(work);
  }

  private async handle(
    acknowledgements: Acknowledgements,
    channel: Channel,
    message: ConsumeMessage,
  ): Promise<void> {
    const request = parseRequest(message.content);
    // amqplib types message properties as `any`; replyTo is a string when present.
    const { replyTo } = message.properties as { replyTo?: string };
    if (!request) {
      this.deadLetter(acknowledgements, channel, message, 'unparseable RPC request');
      return;
    }
    const span = startSpan(`${request.pattern} process`, {
      kind: SpanKind.SERVER,
      parent: contextFrom(message.properties.headers),
      attributes: { 'app.request_id': request.requestId, 'app.command_id': request.commandId },
    });
    const { encoded: encodedReply, reply } = await this.dispatch({
      ...request,
      redelivered: message.fields.redelivered,
      answerBy: answerBy(message),
      trace: contextOf(span),
    });
    if (!reply.ok) span.setAttribute('app.error_code', reply.error.code);
    endSpan(span, !reply.ok && commandOutcome(reply) === 'failed' ? reply.error.detail : undefined);
    if (replyTo && !this.reply(channel, message, replyTo, encodedReply, request)) return;
    acknowledgements.ack(message);
  }

  /**
   * Sends the reply; false if the channel died after the work was committed (the command comes
   * back redelivered and the handler's command-id check answers it from the stored result). A
   * redelivered command outlived its first consumer: its caller may have been on a node that died
   * with it, and a reply to such a caller crashes the broker's channel, so it goes by DirectReplies.
   */
  private reply(
    channel: Channel,
    message: ConsumeMessage,
    replyTo: string,
    encodedReply: string,
    request: RpcRequest,
  ): boolean {
    const content = Buffer.from(encodedReply);
    const properties = {
      correlationId: message.properties.correlationId as string | undefined,
      contentType: 'application/json',
    };
    if (message.fields.redelivered) {
      this.options.replies.send(replyTo, content, properties);
      return true;
    }
    try {
      channel.sendToQueue(replyTo, content, properties);
      return true;
    } catch (error) {
      this.options.logger.warn(
        { err: (error as Error).message, ...logContext(request) },
        'could not reply to RPC command',
      );
      return false;
    }
  }

  /** Runs the handler and encodes its reply; one log line per command, with its request and account ids. */
  private async dispatch(request: RpcRequest): Promise<{ reply: RpcReply; encoded: string }> {
    const startedAt = performance.now();
    const { reply, encoded } = this.encode(request, await this.run(request));
    this.options.logger.info(
      {
        ...logContext(request),
        pattern: request.pattern,
        redelivered: request.redelivered,
        outcome: reply.ok ? 'ok' : reply.error.code,
        duration_ms: Math.round((performance.now() - startedAt) * 10) / 10,
      },
      'rpc handled',
    );
    // Only patterns with a handler become label values: the set stays bounded whatever is sent.
    const pattern = this.handlerFor(request.pattern) ? request.pattern : 'unknown';
    this.options.metrics?.handled(pattern, commandOutcome(reply), (performance.now() - startedAt) / 1000);
    return { reply, encoded };
  }

  /**
   * The reply's wire form: its data through the operation's reply serializer (rpc-envelope.ts), or
   * as it is if already serialized (JsonText). Data the serializer cannot write (not what the
   * contract says) is a bug answered as one, not sent.
   */
  private encode(request: RpcRequest, reply: RpcReply): { reply: RpcReply; encoded: string } {
    if (!reply.ok) return { reply, encoded: JSON.stringify(reply) };
    if (reply.data instanceof JsonText) return { reply, encoded: encodeOkReply(reply.data.text) };
    try {
      return { reply, encoded: encodeOkReply(this.serializers.get(request.pattern)!(reply.data)) };
    } catch (error) {
      this.options.logger.error(
        { ...logContext(request), err: error, pattern: request.pattern },
        'rpc reply does not match its schema',
      );
      return { reply: INTERNAL_ERROR, encoded: JSON.stringify(INTERNAL_ERROR) };
    }
  }

  /**
   * Nest's getHandlerByPattern tries to JSON-parse the pattern on every call (about 5% of the
   * service's CPU under load); handlers never change once listening, so each found one is kept.
   * Unknown patterns are not, so whatever is sent cannot grow the map.
   */
  private handlerFor(pattern: string): MessageHandler | undefined {
    let handler = this.handlers.get(pattern);
    if (!handler) {
      handler = this.getHandlerByPattern(pattern) ?? undefined;
      if (handler) this.handlers.set(pattern, handler);
    }
    return handler;
  }

  /**
   * Validates the command against its operation's schema (the gateway is not the only possible
   * publisher), then runs the handler.
   */
  private async run(request: RpcRequest): Promise<RpcReply> {
    const handler = this.handlerFor(request.pattern);
    const operation = this.operations.get(request.pattern);
    if (!handler || !operation) {
      this.options.logger.error(
        { ...logContext(request), pattern: request.pattern },
        'no handler for RPC pattern',
      );
      return { ok: false, error: { code: 'internal_error', detail: `Unknown operation ${request.pattern}` } };
    }
    try {
      const command = { ...request, data: parseWith(operation.command, request.data) };
      const call = async (): Promise<unknown> => {
        // Our handlers return promises; RxJS is only for one that returns an Observable.
        const result: unknown = await handler(command);
        return isObservable(result) ? lastValueFrom(result, { defaultValue: null }) : (result ?? null);
      };
      const failures = this.options.failures ?? NO_FAILURE_POLICY;
      const data = await (operation.readOnly ? failures.retryRead(call, request.answerBy) : call());
      return { ok: true, data };
    } catch (error) {
      if (error instanceof DomainError) return { ok: false, error: error.toPayload() };
      const outage = (this.options.failures ?? NO_FAILURE_POLICY).outage(error);
      if (outage) {
        // An outage, not a bug: the caller is told to retry (503), the cause is logged with its
        // stack, which names the call that met the outage.
        this.options.logger.warn(
          { ...logContext(request), err: error, pattern: request.pattern },
          outage.code === 'database_unavailable' ? 'database unavailable' : outage.message,
        );
        return { ok: false, error: outage.toPayload() };
      }
      this.options.logger.error(
        { ...logContext(request), err: error, pattern: request.pattern },
        'rpc handler failed',
      );
      return INTERNAL_ERROR;
    }
  }

  /** A message that can never succeed goes to the dead-letter queue instead of looping forever. */
  private deadLetter(
    acknowledgements: Acknowledgements,
    channel: Channel,
    message: ConsumeMessage,
    reason: string,
  ): void {
    this.options.logger.error({ reason, bytes: message.content.length }, 'dead-lettering RPC message');
    this.options.metrics?.deadLettered();
    try {
      channel.sendToQueue(this.options.deadLetterQueue, message.content, {
        persistent: true,
        headers: { 'x-dead-letter-reason': reason, 'x-original-queue': this.options.queue },
      });
      acknowledgements.ack(message);
    } catch {
      // Left unacknowledged: it is redelivered and dead-lettered on the next attempt.
    }
  }
}

function commandOutcome(reply: RpcReply): RpcCommandOutcome {
  if (reply.ok) return 'ok';
  return ERROR_CATALOGUE[reply.error.code].status >= 500 ? 'failed' : 'rejected';
}

function parseRequest(content: Buffer): RpcRequest | undefined {
  try {
    const value = JSON.parse(content.toString('utf8')) as Partial<RpcRequest>;
    const isText = (v: unknown) => typeof v === 'string' && v.length > 0 && v.length <= 200;
    if (
      value &&
      isText(value.pattern) &&
      isText(value.commandId) &&
      isText(value.requestId) &&
      isText(value.accountId)
    ) {
      return value as RpcRequest;
    }
  } catch {
    // fall through
  }
  return undefined;
}

/** The caller's deadline: the command's TTL (its caller's timeout) from now, at the latest. */
function answerBy(message: ConsumeMessage): number | undefined {
  const ttl = Number(message.properties.expiration);
  return Number.isFinite(ttl) && ttl > 0 ? Date.now() + ttl : undefined;
}

/** The fields that let one request be followed across services' logs. */
function logContext(request: RpcRequest): { request_id: string; account_id: string } {
  return { request_id: request.requestId, account_id: request.accountId };
}
