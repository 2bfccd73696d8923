import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel } from 'amqplib';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { GatewayConfig } from '@app/config';
import {
  type CloudEvent,
  CONVERSATIONS_EVENTS_EXCHANGE,
  EventRpc,
  type EventView,
  type RpcCallContext,
} from '@app/contracts';
import { type Dialect, isEventType, type Plan } from '@app/dialects';
import { DomainError } from '@app/errors';
import { METRIC_PREFIX } from '@app/observability';
import { consumer, type RpcClient } from '@app/messaging';
import type { AccountChange } from '../accounts/account-changes';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { recordWhenClosed } from '../http/response-records';
import { EventStream } from './event-stream';
import { SLOT_TTL_MS, type StreamSlots } from './stream-slots';

/** Backlog events read per call while a stream resumes. */
const REPLAY_PAGE = 500;

export interface StreamRequest {
  call: RpcCallContext;
  /** The API key that opened it. */
  keyId: string;
  /** The account's plan when it opened: a stream outlives no plan change. */
  plan: Plan;
  dialect: Dialect;
  /** Resume after this event (Last-Event-ID), or only live events from now. */
  lastEventId?: string;
  reply: FastifyReply;
}

/**
 * The live half of the events API, one per gateway process. The gateway consumes
 * `conversations.events` through a queue of its own (exclusive, auto-delete, server-named) and
 * hands each event to its account's open streams here; any replica's stream sees every event,
 * whichever replica's request caused it. The queue is bound to the exchange only while the
 * process has streams open (and STREAM_FEED_LINGER_MS after): a gateway nobody streams from receives no
 * events, so N gateways do not multiply every event's broker and parsing cost by N.
 * If the feed's channel drops, events may have been missed: every stream is closed and its client
 * resumes with Last-Event-ID. Open streams per account are bounded across replicas (StreamSlots).
 *
 * A key or account change ends the streams it concerns when the CLI announces it (endStreamsOf).
 * An announcement can be missed (Redis down at that moment), so each time the slots are renewed
 * every open stream's key is checked again as a new request would be (recheckKeys): revoked or
 * gone, without `events:read`, or its account on another plan, and the stream ends.
 */
export class StreamHub {
  private channel?: ChannelWrapper;
  /** The feed's channel and queue, once set up; bound to the exchange while `bound`. */
  private feed?: { channel: Channel; queue: string };
  private bound = false;
  private binding?: Promise<void>;
  private unbindTimer?: NodeJS.Timeout;
  private consuming = false;
  private stopping = false;
  private renewal?: NodeJS.Timeout;
  private rechecking = false;
  private readonly streams = new Map<string, Set<EventStream>>();
  /** The plan each open stream was opened under. */
  private readonly plans = new WeakMap<EventStream, Plan>();

  constructor(
    private readonly amqp: AmqpConnectionManager,
    private readonly rpc: RpcClient,
    private readonly slots: StreamSlots,
    private readonly keys: Pick<ApiKeyAuthenticator, 'authenticateKeyId'>,
    private readonly config: GatewayConfig,
    private readonly logger: Logger,
    registry: Registry,
  ) {
    const openStreams = () => this.openStreams;
    const bound = () => (this.bound ? 1 : 0);
    new Gauge({
      name: `${METRIC_PREFIX}event_streams_open`,
      help: 'Open GET /v1/events/stream connections of this process',
      registers: [registry],
      collect() {
        this.set(openStreams());
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}event_feed_bound`,
      help: 'Whether this process receives conversations.events (1 while it has streams open, and STREAM_FEED_LINGER_MS after)',
      registers: [registry],
      collect() {
        this.set(bound());
      },
    });
  }

  /** Resolves once the feed is consuming (the gateway waits for RabbitMQ at start-up anyway). */
  async start(): Promise<void> {
    this.channel = this.amqp.createChannel({
      name: 'gateway-event-streams',
      confirm: false,
      setup: async (channel: Channel) => {
        await channel.assertExchange(CONVERSATIONS_EVENTS_EXCHANGE, 'topic', { durable: true });
        const { queue } = await channel.assertQueue('', {
          exclusive: true,
          autoDelete: true,
          durable: false,
        });
        await channel.consume(
          queue,
          consumer(channel, (message) => this.dispatch(message.content)),
          { noAck: true },
        );
        channel.once('close', () => this.feedLost());
        this.feed = { channel, queue };
        this.bound = false;
        this.consuming = true;
      },
    });
    this.renewal = setInterval(() => {
      this.renewSlots();
      void this.recheckKeys();
    }, SLOT_TTL_MS / 3);
    await this.channel.waitForConnect();
  }

  /** Ends every stream (their clients resume elsewhere) and stops consuming. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.renewal);
    clearTimeout(this.unbindTimer);
    this.closeAll();
    await this.channel?.close().catch(() => undefined);
  }

  /** Open streams of this process. */
  get openStreams(): number {
    let count = 0;
    for (const streams of this.streams.values()) count += streams.size;
    return count;
  }

  /**
   * Opens a stream: claims the account's slot, subscribes, reads the backlog after
   * `lastEventId` (an unknown one is the service's 400, answered before anything is streamed),
   * then streams. Resolves once the stream is live.
   */
  async open(request: StreamRequest): Promise<void> {
    if (!this.consuming || this.stopping) {
      throw feedUnavailable();
    }
    const { accountId } = request.call;
    const stream = new EventStream(
      accountId,
      request.keyId,
      request.dialect,
      request.reply.raw,
      { heartbeatMs: this.config.STREAM_HEARTBEAT_MS, bufferLimit: this.config.STREAM_BUFFER_EVENTS },
      (closed) => this.closed(closed),
    );
    if (!(await this.claimSlot(accountId, stream.id))) {
      throw new DomainError(
        'too_many_streams',
        `This account has ${this.config.STREAMS_PER_ACCOUNT} event streams open, as many as it may; close one first.`,
      );
    }
    if (stream.isClosed) return this.closed(stream); // the client left while the slot was claimed
    this.plans.set(stream, request.plan);
    const streams = this.streams.get(accountId) ?? new Set();
    this.streams.set(accountId, streams.add(stream));
    try {
      // Bound before the backlog is read (or, with none, before the stream starts): every event
      // after this point arrives live, every one before it is in the backlog.
      await this.ensureBound();
      let page = request.lastEventId
        ? await this.rpc.call(EventRpc.replay, request.call, {
            afterEventId: request.lastEventId,
            limit: REPLAY_PAGE,
          })
        : undefined;
      request.reply.hijack();
      request.reply.request.streamed = stream;
      recordWhenClosed(request.reply.request, request.reply);
      stream.start(request.reply.getHeaders());
      request.reply.request.leaveInFlight?.();
      while (page && !stream.isClosed) {
        stream.sendBacklog(page.data);
        if (!page.more) break;
        // A page of its own after the first: the request's deadline was for the first answer.
        page = await this.rpc.call(
          EventRpc.replay,
          { accountId, requestId: request.call.requestId },
          { afterEventId: page.data[page.data.length - 1].id, limit: REPLAY_PAGE },
        );
      }
      stream.goLive();
    } catch (error) {
      if (!request.reply.raw.headersSent) {
        stream.close();
        throw error;
      }
      this.logger.warn(
        { err: (error as Error).message, account_id: accountId },
        'event stream resume failed',
      );
      stream.close();
    }
  }

  /**
   * Ends the streams an account change concerns, on this process (every gateway hears each
   * change): those opened with a key that changed (revoked, or given other rights), or every
   * stream of an account whose plan changed. Their clients reconnect and are authenticated anew.
   */
  endStreamsOf(change: AccountChange): void {
    const concerned = (stream: EventStream) =>
      'keyId' in change ? stream.keyId === change.keyId : stream.accountId === change.accountId;
    const ended = [...this.streams.values()].flatMap((streams) => [...streams].filter(concerned));
    this.end(ended, 'keyId' in change ? change.keyId : undefined);
  }

  /**
   * Checks every open stream's key again (read afresh within AUTH_CACHE_TTL_MS) and ends the
   * streams whose key a request could no longer stream with: revoked or gone, without
   * `events:read`, or whose account's plan is not the one they opened under. A key that cannot be
   * read (Postgres unavailable) keeps its streams: nothing says it changed.
   */
  async recheckKeys(): Promise<void> {
    if (this.rechecking) return; // the previous check is still waiting for its keys
    this.rechecking = true;
    try {
      await this.recheck();
    } finally {
      this.rechecking = false;
    }
  }

  private async recheck(): Promise<void> {
    const byKey = new Map<string, EventStream[]>();
    for (const streams of this.streams.values()) {
      for (const stream of streams) byKey.set(stream.keyId, [...(byKey.get(stream.keyId) ?? []), stream]);
    }
    for (const [keyId, streams] of byKey) {
      let principal: Awaited<ReturnType<ApiKeyAuthenticator['authenticateKeyId']>> | undefined;
      try {
        principal = await this.keys.authenticateKeyId(keyId);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'unauthorized')) {
          this.logger.debug({ err: (error as Error).message }, 'stream keys not checked again');
          continue;
        }
      }
      const valid = (stream: EventStream) =>
        principal !== undefined &&
        principal.accountId === stream.accountId &&
        principal.scopes.includes('events:read') &&
        principal.plan === this.plans.get(stream);
      this.end(
        streams.filter((stream) => !stream.isClosed && !valid(stream)),
        keyId,
      );
    }
  }

  private end(streams: EventStream[], keyId: string | undefined): void {
    for (const stream of streams) stream.close();
    if (streams.length > 0) {
      this.logger.info(
        { account_id: streams[0].accountId, key_id: keyId, streams: streams.length },
        'event streams ended: their key or account changed',
      );
    }
  }

  private async claimSlot(accountId: string, streamId: string): Promise<boolean> {
    try {
      return await this.slots.claim(accountId, streamId);
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'stream slots unavailable (Redis)');
      if (this.config.RATE_LIMIT_FAIL_MODE === 'open') return true;
      throw new DomainError(
        'service_unavailable',
        'Open streams cannot be counted right now; retry shortly.',
      );
    }
  }

  /** Binds the feed's queue to every event, once; concurrent callers share the one bind. */
  private ensureBound(): Promise<void> {
    const feed = this.feed;
    if (this.bound) return Promise.resolve();
    if (!feed) {
      return Promise.reject(feedUnavailable());
    }
    this.binding ??= feed.channel
      .bindQueue(feed.queue, CONVERSATIONS_EVENTS_EXCHANGE, '#')
      .then(() => {
        if (this.feed === feed) this.bound = true;
      })
      .catch(() => {
        throw feedUnavailable();
      })
      .finally(() => (this.binding = undefined));
    return this.binding;
  }

  /**
   * Unbinds the feed if no stream is open (STREAM_FEED_LINGER_MS after the last one closed). The
   * channel runs its operations in order, so a bind asked for meanwhile lands after this unbind.
   */
  private unbindIfIdle(): void {
    const feed = this.feed;
    if (!feed || !this.bound || this.binding || this.streams.size > 0) return;
    this.bound = false;
    feed.channel
      .unbindQueue(feed.queue, CONVERSATIONS_EVENTS_EXCHANGE, '#')
      .catch((error: Error) => this.logger.debug({ err: error.message }, 'event feed not unbound'));
  }

  private closed(stream: EventStream): void {
    const streams = this.streams.get(stream.accountId);
    streams?.delete(stream);
    if (streams?.size === 0) this.streams.delete(stream.accountId);
    if (this.streams.size === 0) {
      clearTimeout(this.unbindTimer);
      this.unbindTimer = setTimeout(() => this.unbindIfIdle(), this.config.STREAM_FEED_LINGER_MS).unref();
    }
    this.slots
      .release(stream.accountId, stream.id)
      .catch((error: Error) =>
        this.logger.debug({ err: error.message }, 'stream slot not released; it expires'),
      );
  }

  private dispatch(content: Buffer): void {
    const event = toEventView(content);
    if (!event) return;
    for (const stream of this.streams.get(event.accountId) ?? []) stream.deliver(event.view);
  }

  private feedLost(): void {
    this.consuming = false;
    this.feed = undefined;
    this.bound = false;
    if (this.stopping) return;
    this.logger.warn(
      { streams: this.openStreams },
      'event feed channel closed; closing streams so they resume',
    );
    this.closeAll();
  }

  private closeAll(): void {
    for (const streams of [...this.streams.values()]) for (const stream of [...streams]) stream.close();
  }

  private renewSlots(): void {
    for (const [accountId, streams] of this.streams) {
      this.slots
        .renew(
          accountId,
          [...streams].map((stream) => stream.id),
        )
        .catch((error: Error) => this.logger.debug({ err: error.message }, 'stream slots not renewed'));
    }
  }
}

const feedUnavailable = () =>
  new DomainError('service_unavailable', 'The live event feed is not connected; retry shortly.');

/** A published CloudEvent as the events API shows it, with its account; undefined if it is not one. */
function toEventView(content: Buffer): { accountId: string; view: EventView } | undefined {
  try {
    const event = JSON.parse(content.toString('utf8')) as CloudEvent;
    if (typeof event.accountid !== 'string' || typeof event.id !== 'string' || !isEventType(event.type)) {
      return undefined;
    }
    return {
      accountId: event.accountid,
      view: {
        id: event.id,
        type: event.type,
        created_at: event.time,
        conversation_id: event.subject,
        sequence: event.sequence,
        data: event.data,
      },
    };
  } catch {
    return undefined;
  }
}
