import { randomUUID } from 'node:crypto';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import {
  type CommandOf,
  okReplyData,
  type ReplyOf,
  type RpcCallContext,
  type RpcOperation,
  type RpcReply,
  type RpcRequest,
} from '@app/contracts';
import { DomainError } from '@app/errors';
import { type Context, traceHeaders } from '@app/observability';
import {
  DIRECT_REPLY_QUEUE,
  PRESENCE_EXCHANGE_OPTIONS,
  rpcQueueOptions,
  type RpcQueueType,
} from './rpc-queue';
import { consumer } from './consumer';
import { headersOrNone } from './message-headers';
import type { RpcCallOutcome, RpcClientMetrics } from './rpc-metrics';

export interface RpcClientOptions {
  connection: AmqpConnectionManager;
  queue: string;
  /** As the serving service declares it (both ends assert the queue). */
  queueType: RpcQueueType;
  /** Where consumers announce that they left (see RpcServer.close). */
  presenceExchange: string;
  timeoutMs: number;
  /** How long a "the queue has consumers" answer is trusted before asking the broker again. */
  consumerCheckIntervalMs?: number;
  /** The service behind the queue, named in the 503 when it has no consumer (default conversations). */
  serviceName?: string;
  metrics?: RpcClientMetrics;
}

type OutgoingRequest = Omit<RpcRequest, 'commandId'> & {
  commandId?: string;
  /**
   * When the caller's answer is due (a `performance.now()` time, e.g. its HTTP request's arrival
   * plus RPC_TIMEOUT_MS); the call never outlasts it, nor timeoutMs from now. Not sent.
   */
  deadline?: number;
  /** The trace context of the caller's span, sent on as the command's `traceparent`. Not sent itself. */
  trace?: Context;
};

/** A command sent (or waiting to be sent) whose reply has not come yet. */
interface PendingCall {
  /** With the reply's bytes as they came (an RpcReply's JSON). */
  resolve: (content: Buffer) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  /** What is published, the same every time the command is sent again (same command id). */
  envelope: RpcRequest;
  /** When the caller's answer is due (performance.now()). */
  due: number;
  /** AMQP headers: the call's trace context (docs/operations.md "Tracing"). */
  headers: Record<string, string>;
  /** The channel it was published on last; its reply can only come on that one. */
  sentOn?: Channel;
}

/**
 * How long after the queue last had a consumer a command is still sent when it has none now,
 * unless a consumer announced that it left: a consumer that vanished without a word is a replica
 * reconnecting (its broker node died) or one the broker will redeliver to its sibling, and the
 * command waits in the queue for it, within its TTL (docs/scaling.md, "RabbitMQ cluster").
 */
export const CONSUMER_RETURN_GRACE_MS = 5000;

/** How a call wants its reply's data: parsed, or as the JSON bytes the service wrote. */
type ReplyForm = 'parsed' | 'json';

/**
 * Request/reply over RabbitMQ with direct reply-to. A reply can only come on the channel its
 * command was published on: when that channel or its connection is lost (a broker node died), every
 * command in flight is published again, under the same command id and correlation id, on the next
 * channel as soon as it is set up, and a command that arrives meanwhile waits for it. The command
 * log of the service makes the second delivery harmless; a second reply finds no pending call and
 * is dropped. Fails fast instead of hanging: no consumer on the queue (none announced as gone, or
 * none for CONSUMER_RETURN_GRACE_MS) is a 503, no broker until the deadline a 503, no reply a 504.
 */
export class RpcClient {
  private channel?: Channel;
  private readonly wrapper: ChannelWrapper;
  private readonly pending = new Map<string, PendingCall>();
  private consumers = {
    count: 0,
    checkedAt: 0,
    /** When a count above zero was last seen (Date.now()). */
    seenAt: 0,
    /** When a consumer last announced that it left (Date.now()). */
    departedAt: 0,
  };
  private consumerCheck?: Promise<number>;

  constructor(private readonly options: RpcClientOptions) {
    this.wrapper = options.connection.createChannel({
      name: `rpc-client:${options.queue}`,
      confirm: false,
      setup: async (channel: Channel) => {
        const { consumerCount } = await channel.assertQueue(
          options.queue,
          rpcQueueOptions(options.queueType),
        );
        await channel.consume(
          DIRECT_REPLY_QUEUE,
          consumer(channel, (message) => this.settle(message)),
          {
            noAck: true,
          },
        );
        await channel.assertExchange(options.presenceExchange, 'fanout', PRESENCE_EXCHANGE_OPTIONS);
        const { queue: presence } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
        await channel.bindQueue(presence, options.presenceExchange, '');
        await channel.consume(
          presence,
          consumer(channel, () => this.consumerLeft(channel)),
          { noAck: true },
        );
        this.countConsumers(consumerCount);
        this.channel = channel;
        channel.once('close', () => {
          if (this.channel === channel) this.channel = undefined;
        });
        this.sendAgain();
      },
    });
  }

  waitForConnect(): Promise<void> {
    return this.wrapper.waitForConnect();
  }

  get connected(): boolean {
    return this.channel !== undefined;
  }

  private get serviceName(): string {
    return this.options.serviceName ?? 'conversations';
  }

  /** Sends one command of `operation` and resolves with its reply. */
  call<Operation extends RpcOperation>(
    operation: Operation,
    context: RpcCallContext,
    data: CommandOf<Operation>,
  ): Promise<ReplyOf<Operation>> {
    return this.send<ReplyOf<Operation>>({ pattern: operation.pattern, data, ...context });
  }

  /**
   * Like `call`, but resolves with the reply's data as the JSON the service serialized it to
   * (with the operation's reply schema), unparsed: for a response body that is that data as it is.
   */
  callForJson<Operation extends RpcOperation>(
    operation: Operation,
    context: RpcCallContext,
    data: CommandOf<Operation>,
  ): Promise<Buffer> {
    return this.send<Buffer>({ pattern: operation.pattern, data, ...context }, 'json');
  }

  /**
   * One metric observation per call. The caller's trace context travels in the command's AMQP
   * headers, so the command's span is a child of the caller's (the gateway's request span): a span
   * of the call's own would only repeat that pair's times (docs/operations.md "Tracing").
   */
  async send<T>(request: OutgoingRequest, form: ReplyForm = 'parsed'): Promise<T> {
    const startedAt = performance.now();
    const observe = (outcome: RpcCallOutcome) =>
      this.options.metrics?.observe(
        this.serviceName,
        request.pattern,
        outcome,
        (performance.now() - startedAt) / 1000,
      );
    try {
      const data = await this.exchange<T>(request, form, request.trace ? traceHeaders(request.trace) : {});
      observe('ok');
      return data;
    } catch (error) {
      observe(callOutcome(error));
      throw error;
    }
  }

  /**
   * One timer bounds the whole exchange, from here: waiting for the broker (the consumer-count check
   * on a stalled connection included), the publish and the reply. The command's TTL in the queue
   * is what is left of it, so a command the caller gave up on is not started later.
   */
  private async exchange<T>(
    { deadline, trace, ...request }: OutgoingRequest,
    form: ReplyForm,
    headers: Record<string, string>,
  ): Promise<T> {
    const due = Math.min(deadline ?? Infinity, performance.now() + this.options.timeoutMs);
    const correlationId = randomUUID();
    const envelope: RpcRequest = { ...request, commandId: request.commandId ?? correlationId };
    const content = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => this.expire(correlationId), Math.max(0, due - performance.now()));
      const call: PendingCall = { resolve, reject, timer, envelope, due, headers };
      this.pending.set(correlationId, call);
      void this.dispatch(correlationId, call);
    });
    if (form === 'json') {
      const data = okReplyData(content);
      if (data) return data as T;
    }
    const reply = parseReply(content);
    if (!reply.ok) throw DomainError.fromPayload(reply.error);
    // A reply not in encodeOkReply's form (from a service of another release) is re-serialized.
    return (form === 'json' ? Buffer.from(JSON.stringify(reply.data)) : reply.data) as T;
  }

  /**
   * Publishes the command on the current channel unless the queue has no consumer to wait for
   * (503). Without a channel, or if it closes meanwhile, the command stays pending: the next
   * channel's setup sends it (sendAgain), or its timer ends it.
   */
  private async dispatch(correlationId: string, call: PendingCall): Promise<void> {
    const channel = this.channel;
    if (!channel) return;
    const serving = await this.hasConsumers(channel);
    if (this.pending.get(correlationId) !== call || channel !== this.channel || call.sentOn === channel)
      return; // answered, timed out, or sent by another channel's setup meanwhile
    if (!serving) {
      this.fail(correlationId, unavailable(`The ${this.serviceName} service is not running.`));
      return;
    }
    try {
      channel.sendToQueue(this.options.queue, Buffer.from(JSON.stringify(call.envelope)), {
        correlationId,
        replyTo: DIRECT_REPLY_QUEUE,
        contentType: 'application/json',
        expiration: String(Math.max(1, Math.ceil(call.due - performance.now()))),
        headers: headersOrNone(call.headers),
      });
      call.sentOn = channel;
    } catch {
      // The channel is closing: the next one sends the command again.
    }
  }

  /** On a new channel: every command whose channel was lost, or that waited for one, is sent on it. */
  private sendAgain(): void {
    for (const [correlationId, call] of this.pending) {
      if (call.sentOn !== this.channel) void this.dispatch(correlationId, call);
    }
  }

  /** The call's time is up: 504, or 503 if there was no broker to send it to. */
  private expire(correlationId: string): void {
    if (!this.channel) {
      this.fail(correlationId, unavailable('The message broker is unreachable.'));
      return;
    }
    this.consumers.checkedAt = 0; // a silent service may have gone: ask the broker next time
    this.fail(
      correlationId,
      new DomainError('upstream_timeout', `No reply from the service within ${this.options.timeoutMs} ms.`),
    );
  }

  private fail(correlationId: string, error: Error): void {
    const call = this.pending.get(correlationId);
    if (!call) return;
    this.pending.delete(correlationId);
    clearTimeout(call.timer);
    call.reject(error);
  }

  /** As a Nest provider's value, the client is closed when the app closes. */
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    for (const [id, call] of this.pending) {
      clearTimeout(call.timer);
      call.resolve(SHUTTING_DOWN);
      this.pending.delete(id);
    }
    await this.wrapper.close().catch(() => undefined);
  }

  private settle(message: ConsumeMessage): void {
    const id = message.properties.correlationId as string;
    const call = this.pending.get(id);
    if (!call) return; // late reply to a call that already timed out
    this.pending.delete(id);
    clearTimeout(call.timer);
    call.resolve(message.content);
  }

  /** A consumer left: ask the broker now, so the next request already knows if none is left. */
  private consumerLeft(channel: Channel): void {
    this.consumers.departedAt = Date.now();
    this.consumers.checkedAt = 0;
    void this.consumerCount(channel);
  }

  private countConsumers(count: number): void {
    const now = Date.now();
    this.consumers.count = count;
    this.consumers.checkedAt = now;
    if (count > 0) this.consumers.seenAt = now;
  }

  /**
   * Whether a command may be sent: the queue has a consumer, or had one a moment ago that did not
   * announce it was leaving (see CONSUMER_RETURN_GRACE_MS).
   */
  private async hasConsumers(channel: Channel): Promise<boolean> {
    if ((await this.consumerCount(channel)) > 0) return true;
    const { seenAt, departedAt } = this.consumers;
    return departedAt < seenAt && Date.now() - seenAt < CONSUMER_RETURN_GRACE_MS;
  }

  /**
   * Consumer count of the queue, asked by one caller at a time. A count above zero is trusted
   * for the interval; zero never is, so a service that has just started is served at once.
   */
  private async consumerCount(channel: Channel): Promise<number> {
    const interval = this.options.consumerCheckIntervalMs ?? 1000;
    if (this.consumers.count > 0 && Date.now() - this.consumers.checkedAt < interval)
      return this.consumers.count;
    this.consumerCheck ??= channel
      .checkQueue(this.options.queue)
      .then(({ consumerCount }) => {
        this.countConsumers(consumerCount);
        return consumerCount;
      })
      .catch(() => this.consumers.count)
      .finally(() => (this.consumerCheck = undefined));
    return this.consumerCheck;
  }
}

const encodedReply = (reply: RpcReply) => Buffer.from(JSON.stringify(reply));

const SHUTTING_DOWN = encodedReply({
  ok: false,
  error: { code: 'service_unavailable', detail: 'The gateway is shutting down.' },
});

function parseReply(content: Buffer): RpcReply {
  try {
    return JSON.parse(content.toString('utf8')) as RpcReply;
  } catch {
    return { ok: false, error: { code: 'internal_error', detail: 'Malformed reply from the service.' } };
  }
}

function callOutcome(error: unknown): RpcCallOutcome {
  const code = error instanceof DomainError ? error.code : undefined;
  if (code === 'upstream_timeout') return 'timeout';
  if (code === 'service_unavailable') return 'unavailable';
  return 'error_reply';
}

function unavailable(detail: string): DomainError {
  return new DomainError('service_unavailable', detail);
}
