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
import {
  DIRECT_REPLY_QUEUE,
  PRESENCE_EXCHANGE_OPTIONS,
  rpcQueueOptions,
  type RpcQueueType,
} from './rpc-queue';
import { consumer } from './consumer';
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
};

interface PendingCall {
  /** With the reply's bytes as they came (an RpcReply's JSON). */
  resolve: (content: Buffer) => void;
  timer: NodeJS.Timeout;
}

/** How a call wants its reply's data: parsed, or as the JSON bytes the service wrote. */
type ReplyForm = 'parsed' | 'json';

/**
 * Request/reply over RabbitMQ with direct reply-to. Fails fast instead of hanging:
 * no broker connection or no consumer on the queue is a 503, no reply within the timeout a 504.
 */
export class RpcClient {
  private channel?: Channel;
  private readonly wrapper: ChannelWrapper;
  private readonly pending = new Map<string, PendingCall>();
  private consumers = { count: 0, checkedAt: 0 };
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
          consumer(channel, () => this.recheckConsumers(channel)),
          { noAck: true },
        );
        this.consumers = { count: consumerCount, checkedAt: Date.now() };
        this.channel = channel;
        channel.once('close', () => {
          if (this.channel === channel) this.channel = undefined;
        });
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
      const data = await this.exchange<T>(request, form);
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
  private async exchange<T>({ deadline, ...request }: OutgoingRequest, form: ReplyForm): Promise<T> {
    const due = Math.min(deadline ?? Infinity, performance.now() + this.options.timeoutMs);
    const correlationId = randomUUID();
    const content = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(correlationId);
          this.consumers.checkedAt = 0; // a silent service may have gone: ask the broker next time
          reject(
            new DomainError(
              'upstream_timeout',
              `No reply from the service within ${this.options.timeoutMs} ms.`,
            ),
          );
        },
        Math.max(0, due - performance.now()),
      );
      this.pending.set(correlationId, { resolve, timer });
      const envelope: RpcRequest = { ...request, commandId: request.commandId ?? correlationId };
      this.publish(correlationId, envelope, due).catch((error: unknown) => {
        if (!this.pending.delete(correlationId)) return; // already timed out
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
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

  /** Publishes the command unless the queue has no consumer (503) or the call has timed out meanwhile. */
  private async publish(correlationId: string, envelope: RpcRequest, due: number): Promise<void> {
    const channel = this.channel;
    if (!channel) throw unavailable('The message broker is unreachable.');
    if ((await this.consumerCount(channel)) === 0)
      throw unavailable(`The ${this.serviceName} service is not running.`);
    if (!this.pending.has(correlationId)) return;
    try {
      channel.sendToQueue(this.options.queue, Buffer.from(JSON.stringify(envelope)), {
        correlationId,
        replyTo: DIRECT_REPLY_QUEUE,
        contentType: 'application/json',
        expiration: String(Math.max(1, Math.ceil(due - performance.now()))),
      });
    } catch {
      throw unavailable('The message broker connection was lost.');
    }
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
  private recheckConsumers(channel: Channel): void {
    this.consumers.checkedAt = 0;
    void this.consumerCount(channel);
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
        this.consumers = { count: consumerCount, checkedAt: Date.now() };
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
