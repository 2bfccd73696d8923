import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PgListener } from '@app/database';
import { Coalescer } from '@app/runtime';
import type { Logger } from 'pino';
import type { WebhooksConfig } from '@app/config';
import { DeliveryStatus, renderEventData } from '@app/contracts';
import { isEventType, renderEventType } from '@app/dialects';
import { DUE_CHANNEL, LOGGER, SUBSCRIPTION_CHANGED_CHANNEL, WEBHOOKS_CONFIG } from '../core/tokens';
import { SecretCipher } from '../secrets/secret-cipher';
import { WebhookMetrics } from './webhook-metrics';
import { ClaimedDelivery, Completion, DeliveriesRepository } from './deliveries.repository';
import { nextAttemptDelayMs } from './retry-schedule';
import { AttemptResult, WebhookSender } from './webhook-sender';

/** Deliveries claimed per query. */
const CLAIM_BATCH = 500;
/** Completions written per statement; they are gathered for one tick at most. */
const COMPLETION_BATCH = 500;

interface EndpointQueue {
  waiting: ClaimedDelivery[];
  inFlight: number;
  /** Conversations with a delivery in flight to this endpoint: their next one waits for it. */
  busy: Set<string>;
}

/**
 * Sends deliveries: those the fan-out claimed for this replica as it created them, and due ones
 * (first attempts others could not take, retries, test sends, manual retries) claimed from
 * Postgres with `FOR UPDATE SKIP LOCKED` under a lease, so replicas never take the same delivery.
 *
 * Concurrency is bounded per subscription (WEBHOOK_CONCURRENCY_PER_ENDPOINT) and in all
 * (WEBHOOK_MAX_IN_FLIGHT); a subscription that already has enough work here is left out of claims,
 * so a slow or dead endpoint occupies at most its own slots and never holds up the others.
 *
 * Within one endpoint, a conversation's deliveries go one at a time in `sequence` order: none is
 * claimed while an earlier one of its conversation still waits for its first attempt (the claims'
 * rule, in the repository), and those claimed together wait here for the previous attempt to
 * finish (whatever its outcome), so a subscriber sees conversation.started before the first
 * message's event, however the events were batched and claimed. A failed attempt's retry comes
 * later and may be overtaken; `sequence` in the body tells the order.
 *
 * Leases of everything held are renewed while it is held; if the replica dies they lapse and
 * another replica (or this one, restarted) claims the work. Outcomes are written in batches.
 */
@Injectable()
export class Dispatcher {
  /** This process's identity on the leases it takes. */
  readonly owner = randomUUID();
  private readonly endpoints = new Map<string, EndpointQueue>();
  private readonly held = new Set<string>();
  private readonly sends = new Set<Promise<void>>();
  private inFlight = 0;
  private completions: Completion[] = [];
  /** Outcomes gathered in one turn of the event loop are written together. */
  private readonly flusher = new Coalescer(() => this.flushBatches(), 'next-turn');
  private readonly claims = new Coalescer(
    () => this.claim(),
    'now',
    (error) => this.logger.warn({ err: (error as Error).message }, 'claiming deliveries failed'),
  );
  private stopped = true;
  private pollTimer?: NodeJS.Timeout;
  private renewTimer?: NodeJS.Timeout;
  /** NOTIFYs of due work and changed subscriptions; if it drops, polling carries on until it is back. */
  private readonly listener: PgListener;

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly sender: WebhookSender,
    @Inject(WEBHOOKS_CONFIG) private readonly config: WebhooksConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: WebhookMetrics,
    private readonly cipher: SecretCipher,
  ) {
    this.listener = new PgListener({
      settings: config,
      name: 'webhooks-dispatcher-listener',
      channels: [DUE_CHANNEL, SUBSCRIPTION_CHANGED_CHANNEL],
      onNotification: (channel, payload) => {
        if (channel === DUE_CHANNEL) this.wake();
        else if (channel === SUBSCRIPTION_CHANGED_CHANNEL && payload) this.subscriptionChanged(payload);
      },
      logger,
    });
  }

  get leaseSeconds(): number {
    return this.config.WEBHOOK_LEASE_SECONDS;
  }

  get maxAttempts(): number {
    return this.config.WEBHOOK_RETRY_SCHEDULE.length + 1;
  }

  /** Whether the fan-out should claim new deliveries for this replica, and for which subscriptions not. */
  claimAdvice(): { owner: string | null; leaseSeconds: number; exclude: string[] } {
    return {
      owner: !this.stopped && this.held.size < this.maxHeld ? this.owner : null,
      leaseSeconds: this.leaseSeconds,
      exclude: this.saturated(),
    };
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.listener.start();
    this.pollTimer = setInterval(() => this.wake(), this.config.WEBHOOK_POLL_MS);
    const renewEvery = Math.max(500, (this.leaseSeconds * 1000) / 3);
    this.renewTimer = setInterval(() => void this.renewLeases(), renewEvery);
    this.wake();
  }

  /**
   * Stops claiming, gives back what is queued but not started (other replicas take it at once),
   * lets in-flight attempts finish (each is bounded by the timeout) and writes their outcomes.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.renewTimer);
    await this.listener.stop();
    await this.claims.current;
    const queued = [...this.endpoints.values()].flatMap((endpoint) => endpoint.waiting.splice(0));
    await this.release(queued.map((delivery) => delivery.id));
    await Promise.allSettled([...this.sends]);
    await this.flush();
  }

  /** Deliveries the fan-out created already claimed for this replica. */
  accept(deliveries: ClaimedDelivery[]): void {
    if (this.stopped) {
      void this.release(deliveries.map((d) => d.id));
      return;
    }
    for (const delivery of bySequence(deliveries)) this.enqueue(delivery);
    this.pump();
  }

  /** Looks for due work now (after a NOTIFY, a poll tick, or freed capacity). */
  wake(): void {
    if (!this.stopped) this.claims.wake();
  }

  private get maxHeld(): number {
    return this.config.WEBHOOK_MAX_IN_FLIGHT * 2;
  }

  /**
   * Subscriptions with enough work here already: two rounds of their concurrency. A soft bound:
   * it is read once per claiming statement, so one statement (a fan-out batch, a claim) can take
   * a subscription past it by what that statement claims for it.
   */
  private saturated(): string[] {
    const limit = this.config.WEBHOOK_CONCURRENCY_PER_ENDPOINT * 2;
    const full: string[] = [];
    for (const [id, endpoint] of this.endpoints)
      if (endpoint.waiting.length + endpoint.inFlight >= limit) full.push(id);
    return full;
  }

  private async claim(): Promise<void> {
    while (!this.stopped) {
      const room = Math.min(CLAIM_BATCH, this.maxHeld - this.held.size);
      if (room <= 0) return;
      const claimed = await this.deliveries.claimDue(this.owner, this.leaseSeconds, this.saturated(), room);
      if (this.stopped) {
        await this.release(claimed.map((d) => d.id));
        return;
      }
      for (const delivery of bySequence(claimed)) this.enqueue(delivery);
      this.pump();
      if (claimed.length < room) return;
    }
  }

  private enqueue(delivery: ClaimedDelivery): void {
    if (this.held.has(delivery.id)) return;
    this.held.add(delivery.id);
    let endpoint = this.endpoints.get(delivery.subscription_id);
    if (!endpoint) {
      endpoint = { waiting: [], inFlight: 0, busy: new Set() };
      this.endpoints.set(delivery.subscription_id, endpoint);
    }
    endpoint.waiting.push(delivery);
  }

  /** Starts as many sends as the limits allow. */
  private pump(): void {
    for (const [subscriptionId, endpoint] of this.endpoints) {
      while (
        endpoint.inFlight < this.config.WEBHOOK_CONCURRENCY_PER_ENDPOINT &&
        this.inFlight < this.config.WEBHOOK_MAX_IN_FLIGHT &&
        !this.stopped
      ) {
        // The first waiting delivery whose conversation has nothing in flight here.
        const next = endpoint.waiting.findIndex(
          (waiting) => waiting.conversation_id === null || !endpoint.busy.has(waiting.conversation_id),
        );
        if (next < 0) break;
        const [delivery] = endpoint.waiting.splice(next, 1);
        const conversation = delivery.conversation_id;
        if (conversation !== null) endpoint.busy.add(conversation);
        endpoint.inFlight++;
        this.inFlight++;
        const send = this.attempt(delivery).finally(() => {
          this.sends.delete(send);
          if (conversation !== null) endpoint.busy.delete(conversation);
          endpoint.inFlight--;
          this.inFlight--;
          if (endpoint.inFlight === 0 && endpoint.waiting.length === 0) this.endpoints.delete(subscriptionId);
          this.pump();
        });
        this.sends.add(send);
      }
      if (this.inFlight >= this.config.WEBHOOK_MAX_IN_FLIGHT) return;
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    let result: AttemptResult;
    try {
      result = await this.sender.send({
        url: delivery.url,
        webhookId: delivery.event_id,
        body: renderBody(delivery),
        secrets: this.signingSecrets(delivery),
        traceparent: delivery.traceparent,
      });
    } catch (error) {
      result = {
        startedAt: new Date(),
        durationMs: 0,
        statusCode: null,
        responseBody: null,
        error: String(error),
        failure: 'other',
      };
    }
    this.metrics.attempted(result, delivery.occurred_at);
    this.complete(delivery, result);
  }

  /** The current secret, then the rotated-out one in its grace period; decrypted for this attempt only. */
  private signingSecrets(delivery: ClaimedDelivery): string[] {
    if (delivery.secret_encrypted === null)
      throw new Error('the signing secret is not encrypted yet: run `cms secrets:reencrypt`');
    return [delivery.secret_encrypted, delivery.previous_secret_encrypted]
      .filter((stored): stored is string => stored !== null)
      .map((stored) => this.cipher.decrypt(stored, delivery.subscription_id));
  }

  private complete(delivery: ClaimedDelivery, result: AttemptResult): void {
    const attempt = delivery.attempt_count + 1;
    const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const gone = result.statusCode === 410;
    let status: DeliveryStatus = 'succeeded';
    let nextAttemptAt: Date | null = null;
    if (!succeeded) {
      if (gone || attempt >= delivery.max_attempts) {
        status = 'failed';
      } else {
        status = 'pending';
        const delay = nextAttemptDelayMs(
          this.config.WEBHOOK_RETRY_SCHEDULE,
          attempt,
          result.retryAfterSeconds,
        );
        nextAttemptAt = new Date(Date.now() + delay);
      }
    }
    // Never the URL's query or the headers: both may carry secrets.
    this.logger.debug(
      {
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        webhook_id: delivery.subscription_id,
        account_id: delivery.account_id,
        attempt,
        status_code: result.statusCode,
        duration_ms: result.durationMs,
        error: result.error,
        outcome: status,
      },
      'webhook attempt',
    );
    this.completions.push({
      deliveryId: delivery.id,
      subscriptionId: delivery.subscription_id,
      attempt,
      status,
      nextAttemptAt,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      responseBody: result.responseBody,
      error: result.error,
      succeeded,
      gone,
    });
    this.flusher.wake();
  }

  private async flush(): Promise<void> {
    while (this.flusher.current || this.completions.length > 0) {
      await this.flusher.idle();
      if (this.completions.length > 0) await this.flushBatches();
    }
  }

  private async flushBatches(): Promise<void> {
    while (this.completions.length > 0) {
      const batch = this.completions.splice(0, COMPLETION_BATCH);
      try {
        const disabled = await this.writeWithRetry(batch);
        for (const id of disabled) this.logger.warn({ webhook_id: id }, 'webhook subscription disabled');
      } catch (error) {
        // The leases lapse and the deliveries are sent again: at least once, never lost.
        this.logger.error(
          { err: (error as Error).message, count: batch.length },
          'recording webhook attempts failed',
        );
      }
      for (const completion of batch) this.held.delete(completion.deliveryId);
      this.wake();
    }
  }

  private async writeWithRetry(batch: Completion[]): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deliveries.complete(this.owner, batch, this.config.WEBHOOK_DISABLE_AFTER_DAYS);
      } catch (error) {
        if (attempt >= 5) throw error;
        this.logger.warn(
          { err: (error as Error).message, attempt },
          'recording webhook attempts failed; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  }

  private async renewLeases(): Promise<void> {
    if (this.stopped || this.held.size === 0) return;
    try {
      await this.deliveries.renewLeases(this.owner, [...this.held], this.leaseSeconds);
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'renewing delivery leases failed');
    }
  }

  private async release(ids: string[]): Promise<void> {
    for (const id of ids) this.held.delete(id);
    await this.deliveries
      .releaseLeases(this.owner, ids)
      .catch((error: Error) =>
        this.logger.warn(
          { err: error.message },
          'releasing delivery leases failed; they lapse by themselves',
        ),
      );
  }

  /** A subscription changed (or was deleted): drop its queued deliveries; they are claimed afresh. */
  private subscriptionChanged(subscriptionId: string): void {
    const endpoint = this.endpoints.get(subscriptionId);
    if (!endpoint || endpoint.waiting.length === 0) return;
    const dropped = endpoint.waiting.splice(0);
    void this.release(dropped.map((d) => d.id)).then(() => this.wake());
  }
}

/**
 * The body a subscriber receives (Standard Webhooks): `type` in the subscription's dialect,
 * `timestamp` of the event, `data` as published, with a conversation's status in that dialect too.
 */
export function renderBody(
  delivery: Pick<ClaimedDelivery, 'event_type' | 'occurred_at' | 'data' | 'dialect' | 'sequence'>,
): string {
  const type = isEventType(delivery.event_type)
    ? renderEventType(delivery.event_type, delivery.dialect)
    : delivery.event_type;
  return JSON.stringify({
    type,
    timestamp: new Date(delivery.occurred_at).toISOString(),
    ...(delivery.sequence !== null && { sequence: delivery.sequence }),
    data: renderEventData(delivery.data, delivery.dialect),
  });
}

/** A conversation's deliveries in `sequence` order (a stable sort: others keep theirs). */
const bySequence = (deliveries: ClaimedDelivery[]) =>
  [...deliveries].sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0));
