import { Inject, Injectable } from '@nestjs/common';
import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { WebhooksConfig } from '@app/config';
import {
  CONVERSATIONS_EVENTS_EXCHANGE,
  WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE,
  WEBHOOKS_EVENTS_QUEUE,
} from '@app/contracts';
import { EVENT_TYPES } from '@app/dialects';
import {
  assertDeclared,
  consumer,
  DEAD_LETTER_QUEUE_OPTIONS,
  QUORUM_QUEUE_ARGUMENTS,
  type QueueDeclaration,
} from '@app/messaging';
import {
  contextFrom,
  contextOf,
  endSpan,
  type Span,
  SpanKind,
  startSpan,
  traceHeaders,
} from '@app/observability';
import { Coalescer } from '@app/runtime';
import { DELETED_EVENT, DeliveriesRepository, IncomingEvent } from '../delivery/deliveries.repository';
import { Dispatcher } from '../delivery/dispatcher';
import { AMQP_CONNECTION, LOGGER, WEBHOOKS_CONFIG } from '../core/tokens';
import { WebhookMetrics } from '../delivery/webhook-metrics';

/** Events fanned out per statement. */
const BATCH_SIZE = 500;
/** After a failed batch (Postgres down), wait this long before handing the events back. */
const FAILURE_BACKOFF_MS = 1000;

/**
 * The queue both sides must declare identically. Messages the consumer rejects are dead-lettered
 * by the broker itself into `webhooks.events.dead-letter` (with an x-death header).
 */
export const EVENTS_QUEUE_OPTIONS = {
  durable: true,
  arguments: {
    ...QUORUM_QUEUE_ARGUMENTS,
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE,
  },
};

/** The fan-out's queues as declared (and migrated from classic queues) when the service starts. */
export const EVENT_QUEUE_DECLARATIONS: QueueDeclaration[] = [
  { name: WEBHOOKS_EVENTS_DEAD_LETTER_QUEUE, options: DEAD_LETTER_QUEUE_OPTIONS },
  {
    name: WEBHOOKS_EVENTS_QUEUE,
    options: EVENTS_QUEUE_OPTIONS,
    bindings: EVENT_TYPES.map((pattern) => ({ exchange: CONVERSATIONS_EVENTS_EXCHANGE, pattern })),
  },
];

/** The CloudEvents envelope as far as the fan-out relies on it. */
const cloudEvent = z.object({
  specversion: z.literal('1.0'),
  id: z.string().uuid(),
  type: z.enum(EVENT_TYPES),
  time: z.string().datetime({ offset: true }),
  subject: z.string().uuid(),
  accountid: z.string().uuid(),
  sequence: z.number().int().positive().optional(),
  requestid: z.string().max(200).optional(),
  data: z.record(z.unknown()),
});

interface Received {
  channel: Channel;
  message: ConsumeMessage;
  event: IncomingEvent;
  /** The API request that caused the event (CloudEvents extension `requestid`), for the log. */
  requestId?: string;
  /** The event's fan-out, a child of its publish (docs/operations.md "Tracing"). */
  span: Span;
}

/**
 * Consumes `conversations.events` through the durable queue `webhooks.events` (manual acks,
 * bounded prefetch) and records, for each event, one delivery per matching enabled subscription of
 * its account. Events arriving together are fanned out in one statement; each message is
 * acknowledged only after that statement committed, so a crash at any point means redelivery, and
 * a redelivered event creates nothing (the events table's primary key). What cannot be parsed is
 * rejected without requeue: the broker moves it to the dead-letter queue.
 */
@Injectable()
export class EventConsumer {
  private channel?: ChannelWrapper;
  private readonly consumerTags = new Map<Channel, string>();
  private pending: Received[] = [];
  /** setImmediate: everything that arrived in this turn of the event loop goes in one batch. */
  private readonly flusher = new Coalescer(() => this.flush(), 'next-turn');
  private stopped = false;

  constructor(
    @Inject(AMQP_CONNECTION) private readonly amqp: AmqpConnectionManager,
    private readonly deliveries: DeliveriesRepository,
    private readonly dispatcher: Dispatcher,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: WebhookMetrics,
  ) {}

  async start(): Promise<void> {
    this.channel = this.amqp.createChannel({
      name: 'webhooks-fan-out',
      confirm: false,
      setup: async (channel: Channel) => {
        for (const queue of EVENT_QUEUE_DECLARATIONS) await assertDeclared(channel, queue);
        await channel.prefetch(this.config.WEBHOOK_EVENTS_PREFETCH);
        const { consumerTag } = await channel.consume(
          WEBHOOKS_EVENTS_QUEUE,
          consumer(channel, (message) => this.receive(channel, message)),
          { noAck: false },
        );
        this.consumerTags.set(channel, consumerTag);
        channel.once('close', () => this.consumerTags.delete(channel));
      },
    });
    await this.channel.waitForConnect();
  }

  /** Stops consuming and finishes the batch in hand; anything unacknowledged is redelivered. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const [channel, tag] of this.consumerTags) await channel.cancel(tag).catch(() => undefined);
    await this.flusher.idle();
    await this.channel?.close().catch(() => undefined);
  }

  private receive(channel: Channel, message: ConsumeMessage): void {
    const parsed = parse(message.content);
    if (!parsed) {
      this.logger.error(
        { routing_key: message.fields.routingKey, bytes: message.content.length },
        'dead-lettering an event that is not a valid CloudEvent of a known type',
      );
      this.metrics.consumed('dead_lettered');
      try {
        channel.nack(message, false, false);
      } catch {
        // channel gone: it comes back and is rejected again
      }
      return;
    }
    const span = startSpan(`${CONVERSATIONS_EVENTS_EXCHANGE} process`, {
      kind: SpanKind.CONSUMER,
      parent: contextFrom(message.properties.headers),
      attributes: { 'messaging.message.id': parsed.event.id },
    });
    const event = { ...parsed.event, traceparent: traceHeaders(contextOf(span)).traceparent ?? null };
    this.pending.push({ channel, message, requestId: parsed.requestId, event, span });
    this.flusher.wake();
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, BATCH_SIZE);
      try {
        const events = uniqueEvents(batch);
        // Before the fan-out: a deletion's own deliveries are created after the purge, never purged.
        await this.deliveries.eraseConversations(events.filter((e) => e.type === DELETED_EVENT));
        const created = await this.deliveries.fanOut(
          events,
          this.dispatcher.maxAttempts,
          this.dispatcher.claimAdvice(),
        );
        for (const { channel, message } of batch) settle(() => channel.ack(message));
        for (const { span } of batch) endSpan(span);
        this.metrics.consumed('fanned_out', batch.length);
        this.logFannedOut(batch, created);
        const claimed = created.filter((delivery) => delivery.claimed);
        if (claimed.length > 0) this.dispatcher.accept(claimed);
        if (claimed.length < created.length) this.dispatcher.wake();
      } catch (error) {
        this.logger.warn(
          { err: (error as Error).message, events: batch.length },
          'fan-out failed; events will be redelivered',
        );
        await new Promise((resolve) => setTimeout(resolve, this.stopped ? 0 : FAILURE_BACKOFF_MS));
        for (const { channel, message } of batch) settle(() => channel.nack(message, false, true));
        for (const { span } of batch) endSpan(span, error);
        this.metrics.consumed('requeued', batch.length);
      }
    }
  }

  /** One line per event, naming the request that caused it; delivery lines name the event id. */
  private logFannedOut(batch: Received[], created: { event_id: string }[]): void {
    const deliveries = new Map<string, number>();
    for (const { event_id } of created) deliveries.set(event_id, (deliveries.get(event_id) ?? 0) + 1);
    for (const { event, requestId } of batch) {
      this.logger.info(
        {
          event_id: event.id,
          type: event.type,
          account_id: event.accountId,
          request_id: requestId,
          deliveries: deliveries.get(event.id) ?? 0,
        },
        'event fanned out',
      );
    }
  }
}

/** Acks and nacks on a channel that died are moot: the broker redelivers, the fan-out is idempotent. */
function settle(action: () => void): void {
  try {
    action();
  } catch {
    // channel closed
  }
}

function uniqueEvents(batch: Received[]): IncomingEvent[] {
  const byId = new Map<string, IncomingEvent>();
  for (const { event } of batch) byId.set(event.id, event);
  return [...byId.values()];
}

function parse(
  content: Buffer,
): { event: Omit<IncomingEvent, 'traceparent'>; requestId?: string } | undefined {
  try {
    const result = cloudEvent.safeParse(JSON.parse(content.toString('utf8')));
    if (!result.success) return undefined;
    const { id, accountid, requestid, type, time, subject, sequence, data } = result.data;
    return {
      event: {
        id: id.toLowerCase(),
        accountId: accountid,
        type,
        time,
        conversationId: subject,
        sequence: sequence ?? null,
        data,
      },
      requestId: requestid,
    };
  } catch {
    return undefined;
  }
}
