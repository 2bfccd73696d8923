import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type {
  DeliveryAttemptView,
  DeliveryStatus,
  DeliveryView,
  DeliveryWithAttemptsView,
  EventView,
} from '@app/contracts';
import { execute, prepare } from '@app/database';
import { DUE_CHANNEL } from '../core/tokens';
import { DELIVERY_COLUMNS, DeliveryRow, toDeliveryView } from './delivery-view';

type AttemptRow = Omit<DeliveryAttemptView, 'started_at'> & { started_at: Date };

const SQL = {
  notifyDue: prepare(`SELECT pg_notify('${DUE_CHANNEL}', '')`),
  insertEvent: prepare(
    `INSERT INTO webhooks.events (id, account_id, type, occurred_at, data) VALUES ($1, $2, $3, $4, $5)`,
  ),
  insertDelivery: prepare<DeliveryRow>(
    `INSERT INTO webhooks.deliveries (id, account_id, subscription_id, event_id, event_type, status, max_attempts, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, now()) RETURNING ${DELIVERY_COLUMNS}`,
  ),
  /**
   * A part of a replay: each stored event (kept once: an event already here is left as it is) and a
   * new delivery of it to the subscription, due now, ordered by the conversation's sequence like
   * any delivery.
   */
  insertReplay: prepare(
    `WITH input AS (
       SELECT * FROM unnest($3::uuid[], $4::text[], $5::timestamptz[], $6::jsonb[], $7::uuid[], $8::int[])
         AS i(id, type, occurred_at, data, conversation_id, sequence)
     ), stored AS (
       INSERT INTO webhooks.events (id, account_id, type, occurred_at, data, conversation_id, sequence)
       SELECT i.id, $1, i.type, i.occurred_at, i.data, i.conversation_id, i.sequence FROM input i
       ON CONFLICT (id) DO NOTHING
     )
     INSERT INTO webhooks.deliveries
       (id, account_id, subscription_id, event_id, event_type, status, max_attempts, next_attempt_at,
        conversation_id, sequence)
     SELECT gen_random_uuid(), $1, $2, i.id, i.type, 'pending', $9, now(), i.conversation_id, i.sequence
       FROM input i`,
  ),
  page: prepare<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhooks.deliveries
      WHERE subscription_id = $1 AND account_id = $2 AND ($3::text IS NULL OR status = $3)
      ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
  ),
  count: prepare<{ total: number }>(
    `SELECT count(*)::int AS total FROM webhooks.deliveries
      WHERE subscription_id = $1 AND account_id = $2 AND ($3::text IS NULL OR status = $3)`,
  ),
  find: prepare<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhooks.deliveries WHERE id = $1 AND subscription_id = $2 AND account_id = $3`,
  ),
  attempts: prepare<AttemptRow>(
    `SELECT attempt, started_at, duration_ms, status_code, response_body, error FROM webhooks.delivery_attempts
      WHERE delivery_id = $1 AND account_id = $2 ORDER BY attempt`,
  ),
  lock: prepare<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhooks.deliveries
      WHERE id = $1 AND subscription_id = $2 AND account_id = $3 FOR UPDATE`,
  ),
  /**
   * A manual retry: one more attempt, due now, under the same event (so the same webhook-id); none
   * for a delivery whose event is gone with its deleted conversation.
   */
  retry: prepare<DeliveryRow>(
    `UPDATE webhooks.deliveries d
        SET status = 'pending', max_attempts = attempt_count + 1, next_attempt_at = now(), completed_at = NULL
      WHERE id = $1 AND account_id = $2 AND EXISTS (SELECT 1 FROM webhooks.events e WHERE e.id = d.event_id)
      RETURNING ${DELIVERY_COLUMNS}`,
  ),
};

/**
 * The deliveries as the API shows and changes them: a page of a subscription's deliveries, one
 * with its attempts, a test send and a manual retry (both wake the dispatchers on commit).
 */
@Injectable()
export class DeliveryLogRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A test send: its own event and one delivery, due now; dispatchers are woken on commit. */
  async insertTestDelivery(
    tx: EntityManager,
    accountId: string,
    subscriptionId: string,
    ids: { event: string; delivery: string },
    type: string,
    data: unknown,
    maxAttempts: number,
  ): Promise<DeliveryView> {
    await execute(tx, SQL.insertEvent, [
      ids.event,
      accountId,
      type,
      new Date().toISOString(),
      JSON.stringify(data),
    ]);
    const {
      rows: [row],
    } = await execute(tx, SQL.insertDelivery, [
      ids.delivery,
      accountId,
      subscriptionId,
      ids.event,
      type,
      maxAttempts,
    ]);
    await execute(tx, SQL.notifyDue, []);
    return toDeliveryView(row);
  }

  /** A part of a replay, in order; dispatchers are woken on commit. */
  async insertReplay(
    tx: EntityManager,
    accountId: string,
    subscriptionId: string,
    events: EventView[],
    maxAttempts: number,
  ): Promise<void> {
    await execute(tx, SQL.insertReplay, [
      accountId,
      subscriptionId,
      events.map((e) => e.id),
      events.map((e) => e.type),
      events.map((e) => e.created_at),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.conversation_id),
      events.map((e) => e.sequence),
      maxAttempts,
    ]);
    await execute(tx, SQL.notifyDue, []);
  }

  async page(
    accountId: string,
    subscriptionId: string,
    status: DeliveryStatus | undefined,
    limit: number,
    offset: number,
  ): Promise<{ rows: DeliveryView[]; total: number }> {
    const filter = [subscriptionId, accountId, status ?? null];
    const [{ rows }, count] = await Promise.all([
      execute(this.db, SQL.page, [...filter, limit, offset]),
      execute(this.db, SQL.count, filter),
    ]);
    return { rows: rows.map(toDeliveryView), total: count.rows[0].total };
  }

  async findWithAttempts(
    accountId: string,
    subscriptionId: string,
    deliveryId: string,
  ): Promise<DeliveryWithAttemptsView | undefined> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.find, [deliveryId, subscriptionId, accountId]);
    if (!row) return undefined;
    const { rows: attempts } = await execute(this.db, SQL.attempts, [deliveryId, accountId]);
    return {
      ...toDeliveryView(row),
      attempts: attempts.map((a) => ({ ...a, started_at: a.started_at.toISOString() })),
    };
  }

  async lock(tx: EntityManager, accountId: string, subscriptionId: string, deliveryId: string) {
    const {
      rows: [row],
    } = await execute(tx, SQL.lock, [deliveryId, subscriptionId, accountId]);
    return row && toDeliveryView(row);
  }

  /** Undefined when the delivery's event was erased with its conversation: nothing to send again. */
  async markForRetry(
    tx: EntityManager,
    accountId: string,
    deliveryId: string,
  ): Promise<DeliveryView | undefined> {
    const {
      rows: [row],
    } = await execute(tx, SQL.retry, [deliveryId, accountId]);
    if (!row) return undefined;
    await execute(tx, SQL.notifyDue, []);
    return toDeliveryView(row);
  }
}
