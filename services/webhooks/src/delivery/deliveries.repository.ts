import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { DeliveryStatus } from '@app/contracts';
import { type Dialect, type EventType, PUBLIC_EVENT_TYPES } from '@app/dialects';
import { execute, prepare } from '@app/database';
import { SUBSCRIPTION_CHANGED_CHANNEL } from '../core/tokens';

/** An event as the fan-out received it (a validated CloudEvent). */
export interface IncomingEvent {
  id: string;
  accountId: string;
  type: EventType;
  time: string;
  /** The CloudEvent's `subject`. */
  conversationId: string;
  /** Absent on events published before sequences existed. */
  sequence: number | null;
  data: unknown;
  /** The fan-out's trace context, when traced: each delivery attempt's span is its child. */
  traceparent: string | null;
}

/** A delivery a replica holds: everything needed to send it without another query. */
export interface ClaimedDelivery {
  id: string;
  account_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  attempt_count: number;
  max_attempts: number;
  url: string;
  dialect: Dialect;
  /** Encrypted (SecretCipher); null on a subscription a release before encryption created. */
  secret_encrypted: string | null;
  /** The rotated-out secret, encrypted, while its grace period lasts, else null. */
  previous_secret_encrypted: string | null;
  occurred_at: Date;
  /** Null on test sends (and events stored before sequences existed). */
  conversation_id: string | null;
  sequence: number | null;
  data: unknown;
  /** The stored event's fan-out trace context (docs/operations.md "Tracing"). */
  traceparent: string | null;
}

export interface Completion {
  deliveryId: string;
  subscriptionId: string;
  attempt: number;
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  succeeded: boolean;
  /** The subscriber answered 410 Gone: disable the subscription. */
  gone: boolean;
}

/** What a sender needs, joined onto claimed deliveries `c` (subscription `s`). */
const SEND_COLUMNS = `c.id, c.account_id, c.subscription_id, c.event_id, c.event_type, c.attempt_count, c.max_attempts,
  s.url, s.dialect, s.secret_encrypted,
  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_encrypted END AS previous_secret_encrypted`;

/**
 * Delivery `alias` may be claimed: no earlier delivery of its conversation to the same subscription
 * is still waiting for its first attempt (wherever it is: unclaimed, another replica's, in flight).
 * This is what keeps a conversation's deliveries to an endpoint in `sequence` order across fan-out
 * batches, claims and replicas; a failed attempt no longer holds the next ones back (its retry may
 * be overtaken). Deliveries claimed by the same fan-out statement are sorted by the dispatcher.
 */
const FIRST_IN_LINE = (alias: string) => `NOT EXISTS (
         SELECT 1 FROM webhooks.deliveries earlier
          WHERE earlier.subscription_id = ${alias}.subscription_id
            AND earlier.conversation_id = ${alias}.conversation_id
            AND earlier.sequence < ${alias}.sequence
            AND earlier.status = 'pending' AND earlier.attempt_count = 0)`;

/** The event that erases what is stored of its conversation (eraseConversations). */
export const DELETED_EVENT: EventType = 'conversation.deleted';

/** What `*` stands for (docs/webhooks.md): the four original public types, not those added since. */
const WILDCARD_TYPES = `ARRAY[${PUBLIC_EVENT_TYPES.map((type) => `'${type}'`).join(', ')}]::text[]`;

const SQL = {
  /**
   * The whole fan-out of a batch of events in one statement: store each event that has at least
   * one matching enabled subscription (once: a redelivered event conflicts on the primary key and
   * creates nothing), create one delivery per match, and claim them for this replica ($7) unless
   * it has no room for that subscription ($8) or at all ($7 null), or an earlier delivery of the
   * conversation waits for its first attempt.
   */
  fanOut: prepare<ClaimedDelivery & { claimed: boolean }>(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::jsonb[], $10::uuid[],
                            $11::int[], $12::text[])
         AS i(id, account_id, type, occurred_at, data, conversation_id, sequence, traceparent)
     ), matched AS (
       SELECT i.id AS event_id, i.account_id, i.type, i.conversation_id, i.sequence, s.id AS subscription_id
         FROM input i
         JOIN webhooks.subscriptions s
           ON s.account_id = i.account_id AND s.status = 'enabled'
          AND s.events && CASE WHEN i.type = ANY(${WILDCARD_TYPES}) THEN ARRAY[i.type, '*'] ELSE ARRAY[i.type] END
     ), claimable AS (
       SELECT m.*, $7::uuid IS NOT NULL AND m.subscription_id <> ALL($8::uuid[]) AND ${FIRST_IN_LINE('m')} AS claim
         FROM matched m
     ), stored AS (
       INSERT INTO webhooks.events (id, account_id, type, occurred_at, data, conversation_id, sequence, traceparent)
       SELECT i.id, i.account_id, i.type, i.occurred_at, i.data, i.conversation_id, i.sequence, i.traceparent
         FROM input i
        WHERE EXISTS (SELECT 1 FROM matched m WHERE m.event_id = i.id)
       ON CONFLICT (id) DO NOTHING
       RETURNING id
     ), created AS (
       INSERT INTO webhooks.deliveries
         (id, account_id, subscription_id, event_id, event_type, status, max_attempts, next_attempt_at,
          lease_owner, lease_until, conversation_id, sequence)
       SELECT gen_random_uuid(), m.account_id, m.subscription_id, m.event_id, m.type, 'pending', $6, now(),
              CASE WHEN m.claim THEN $7::uuid END,
              CASE WHEN m.claim THEN now() + make_interval(secs => $9) END,
              m.conversation_id, m.sequence
         FROM claimable m JOIN stored ON stored.id = m.event_id
       RETURNING id, account_id, subscription_id, event_id, event_type, attempt_count, max_attempts, lease_owner
     )
     SELECT ${SEND_COLUMNS}, i.occurred_at, i.data, i.conversation_id, i.sequence, i.traceparent,
            c.lease_owner IS NOT NULL AS claimed
       FROM created c
       JOIN webhooks.subscriptions s ON s.id = c.subscription_id
       JOIN input i ON i.id = c.event_id`,
  ),
  /** Due deliveries of enabled subscriptions nobody holds, first in line, oldest first, for this replica. */
  claimDue: prepare<ClaimedDelivery>(
    `WITH due AS (
       SELECT d.id FROM webhooks.deliveries d
        WHERE d.status = 'pending' AND d.next_attempt_at <= now()
          AND (d.lease_until IS NULL OR d.lease_until < now())
          AND d.subscription_id <> ALL($3::uuid[])
          AND EXISTS (SELECT 1 FROM webhooks.subscriptions s WHERE s.id = d.subscription_id AND s.status = 'enabled')
          AND ${FIRST_IN_LINE('d')}
        ORDER BY d.next_attempt_at
        LIMIT $4
        FOR UPDATE OF d SKIP LOCKED
     ), c AS (
       UPDATE webhooks.deliveries d SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
         FROM due WHERE d.id = due.id
       RETURNING d.id, d.account_id, d.subscription_id, d.event_id, d.event_type, d.attempt_count, d.max_attempts
     )
     SELECT ${SEND_COLUMNS}, e.occurred_at, e.data, e.conversation_id, e.sequence, e.traceparent
       FROM c
       JOIN webhooks.subscriptions s ON s.id = c.subscription_id
       JOIN webhooks.events e ON e.id = c.event_id`,
  ),
  renewLeases: prepare(
    `UPDATE webhooks.deliveries SET lease_until = now() + make_interval(secs => $3)
      WHERE id = ANY($1::uuid[]) AND lease_owner = $2`,
  ),
  releaseLeases: prepare(
    `UPDATE webhooks.deliveries SET lease_owner = NULL, lease_until = NULL
      WHERE id = ANY($1::uuid[]) AND lease_owner = $2`,
  ),
  /**
   * Records a batch of attempts: each delivery's new state (only while this replica still holds
   * it) and one row per attempt in the log (kept even if the lease was lost meanwhile).
   */
  complete: prepare(
    `WITH r AS (
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                            $6::int[], $7::int[], $8::text[], $9::text[])
         AS r(id, attempt, status, next_attempt_at, started_at, duration_ms, status_code, response_body, error)
     ), updated AS (
       UPDATE webhooks.deliveries d
          SET status = r.status, attempt_count = r.attempt,
              -- a retry of a subscription disabled meanwhile stays paused (see pauseDeliveries)
              next_attempt_at = CASE WHEN EXISTS (SELECT 1 FROM webhooks.subscriptions s
                                                   WHERE s.id = d.subscription_id AND s.status = 'enabled')
                                     THEN r.next_attempt_at END,
              last_attempt_at = r.started_at, last_status_code = r.status_code,
              lease_owner = NULL, lease_until = NULL,
              completed_at = CASE WHEN r.status = 'pending' THEN NULL ELSE now() END
         FROM r WHERE d.id = r.id AND d.lease_owner = $10
       RETURNING d.id
     )
     INSERT INTO webhooks.delivery_attempts
       (delivery_id, attempt, account_id, started_at, duration_ms, status_code, response_body, error)
     SELECT r.id, r.attempt, d.account_id, r.started_at, r.duration_ms, r.status_code, r.response_body, r.error
       FROM r JOIN webhooks.deliveries d ON d.id = r.id
     ON CONFLICT DO NOTHING`,
  ),
  clearFailing: prepare(
    `UPDATE webhooks.subscriptions SET failing_since = NULL
      WHERE id = ANY($1::uuid[]) AND failing_since IS NOT NULL`,
  ),
  startFailing: prepare(
    `UPDATE webhooks.subscriptions SET failing_since = $2
      WHERE id = ANY($1::uuid[]) AND failing_since IS NULL`,
  ),
  /** Disables the subscriptions given for a reason, or those failing for longer than $3 days. */
  disable: prepare<{ id: string }>(
    `UPDATE webhooks.subscriptions
        SET status = 'disabled', disabled_reason = $2, updated_at = now()
      WHERE id = ANY($1::uuid[]) AND status = 'enabled'
        AND ($3::int IS NULL OR failing_since < now() - make_interval(days => $3))
      RETURNING id`,
  ),
  /**
   * What `conversation.deleted` erases here, for each (account $1, conversation $2): deliveries of
   * the conversation's earlier events still pending are cancelled (they end as failed, never
   * sent), the responses their receivers gave are dropped from the attempt log, and the stored
   * events themselves (their content) are deleted. The delivery rows stay, without a body.
   */
  eraseConversations: prepare(
    `WITH gone AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS g(account_id, conversation_id)
     ), cancelled AS (
       UPDATE webhooks.deliveries d
          SET status = 'failed', next_attempt_at = NULL, lease_owner = NULL, lease_until = NULL, completed_at = now()
         FROM gone g
        WHERE d.conversation_id = g.conversation_id AND d.account_id = g.account_id AND d.status = 'pending'
          AND d.event_type <> '${DELETED_EVENT}'
     ), responses AS (
       UPDATE webhooks.delivery_attempts a SET response_body = NULL
         FROM webhooks.deliveries d, gone g
        WHERE a.delivery_id = d.id AND d.conversation_id = g.conversation_id AND d.account_id = g.account_id
          AND d.event_type <> '${DELETED_EVENT}' AND a.response_body IS NOT NULL
     )
     DELETE FROM webhooks.events e USING gone g
      WHERE e.conversation_id = g.conversation_id AND e.account_id = g.account_id AND e.type <> '${DELETED_EVENT}'`,
  ),
  pauseDeliveries: prepare(
    `UPDATE webhooks.deliveries SET next_attempt_at = NULL
      WHERE subscription_id = ANY($1::uuid[]) AND status = 'pending' AND next_attempt_at IS NOT NULL`,
  ),
  notifyChanged: prepare(
    `SELECT pg_notify('${SUBSCRIPTION_CHANGED_CHANNEL}', id::text) FROM unnest($1::uuid[]) AS id`,
  ),
};

/**
 * The delivery engine's SQL: the fan-out of events into deliveries, claims and their leases, and the
 * completion of attempts with its effect on the subscriptions. What the API reads and changes is
 * in subscriptions/delivery-log.repository.ts.
 */
@Injectable()
export class DeliveriesRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async fanOut(
    events: IncomingEvent[],
    maxAttempts: number,
    claim: { owner: string | null; leaseSeconds: number; exclude: string[] },
  ): Promise<Array<ClaimedDelivery & { claimed: boolean }>> {
    const { rows } = await execute(this.db, SQL.fanOut, [
      events.map((e) => e.id),
      events.map((e) => e.accountId),
      events.map((e) => e.type),
      events.map((e) => e.time),
      events.map((e) => JSON.stringify(e.data)),
      maxAttempts,
      claim.owner,
      claim.exclude,
      claim.leaseSeconds,
      events.map((e) => e.conversationId),
      events.map((e) => e.sequence),
      events.map((e) => e.traceparent),
    ]);
    return rows;
  }

  /** Erases what is stored of the conversations these `conversation.deleted` events name. */
  async eraseConversations(deleted: IncomingEvent[]): Promise<void> {
    if (deleted.length === 0) return;
    await execute(this.db, SQL.eraseConversations, [
      deleted.map((e) => e.accountId),
      deleted.map((e) => e.conversationId),
    ]);
  }

  async claimDue(
    owner: string,
    leaseSeconds: number,
    exclude: string[],
    limit: number,
  ): Promise<ClaimedDelivery[]> {
    const { rows } = await execute(this.db, SQL.claimDue, [owner, leaseSeconds, exclude, limit]);
    return rows;
  }

  async renewLeases(owner: string, ids: string[], leaseSeconds: number): Promise<void> {
    if (ids.length > 0) await execute(this.db, SQL.renewLeases, [ids, owner, leaseSeconds]);
  }

  async releaseLeases(owner: string, ids: string[]): Promise<void> {
    if (ids.length > 0) await execute(this.db, SQL.releaseLeases, [ids, owner]);
  }

  /**
   * Writes a batch of attempt outcomes and their effect on the subscriptions: a success ends a
   * failure streak; a failure starts one (and disables a subscription failing for longer than
   * `disableAfterDays`); a 410 disables at once. Returns the subscriptions disabled.
   */
  complete(owner: string, completions: Completion[], disableAfterDays: number): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      await execute(tx, SQL.complete, [
        completions.map((c) => c.deliveryId),
        completions.map((c) => c.attempt),
        completions.map((c) => c.status),
        completions.map((c) => c.nextAttemptAt?.toISOString() ?? null),
        completions.map((c) => c.startedAt.toISOString()),
        completions.map((c) => c.durationMs),
        completions.map((c) => c.statusCode),
        completions.map((c) => c.responseBody),
        completions.map((c) => c.error),
        owner,
      ]);
      const unique = (list: Completion[]) => [...new Set(list.map((c) => c.subscriptionId))];
      const failed = completions.filter((c) => !c.succeeded);
      const succeeded = unique(completions.filter((c) => c.succeeded));
      const disabled: string[] = [];
      if (failed.length > 0) {
        await execute(tx, SQL.startFailing, [unique(failed), failed[0].startedAt.toISOString()]);
        const gone = unique(failed.filter((c) => c.gone));
        if (gone.length > 0) disabled.push(...(await this.disable(tx, gone, 'endpoint_gone', null)));
        disabled.push(...(await this.disable(tx, unique(failed), 'failing', disableAfterDays)));
      }
      if (succeeded.length > 0) await execute(tx, SQL.clearFailing, [succeeded]);
      if (disabled.length > 0) {
        await execute(tx, SQL.pauseDeliveries, [disabled]);
        await execute(tx, SQL.notifyChanged, [disabled]);
      }
      return disabled;
    });
  }

  private async disable(
    tx: EntityManager,
    ids: string[],
    reason: string,
    afterDays: number | null,
  ): Promise<string[]> {
    const { rows } = await execute(tx, SQL.disable, [ids, reason, afterDays]);
    return rows.map((row) => row.id);
  }
}
