import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { SubscribedEvent, SubscriptionStatus, WebhookView } from '@app/contracts';
import type { Dialect } from '@app/dialects';
import { execute, prepare, query } from '@app/database';
import { SUBSCRIPTION_CHANGED_CHANNEL } from '../core/tokens';

export interface SubscriptionRow {
  id: string;
  account_id: string;
  url: string;
  events: SubscribedEvent[];
  dialect: Dialect;
  description: string | null;
  status: SubscriptionStatus;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewSubscription {
  id: string;
  url: string;
  events: SubscribedEvent[];
  dialect: Dialect;
  description: string | null;
  status: SubscriptionStatus;
  /** The signing secret as SecretCipher encrypted it for this id. */
  secretEncrypted: string;
}

export interface SubscriptionChanges {
  url?: string;
  events?: SubscribedEvent[];
  dialect?: Dialect;
  description?: string | null;
  status?: SubscriptionStatus;
}

const COLUMNS = `id, account_id, url, events, dialect, description, status, disabled_reason, failing_since, created_at, updated_at`;

const SQL = {
  insert: prepare<SubscriptionRow>(
    `INSERT INTO webhooks.subscriptions (id, account_id, url, events, dialect, description, status, secret_encrypted)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
  ),
  page: prepare<SubscriptionRow>(
    `SELECT ${COLUMNS} FROM webhooks.subscriptions WHERE account_id = $1
      ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
  ),
  count: prepare<{ total: number }>(
    `SELECT count(*)::int AS total FROM webhooks.subscriptions WHERE account_id = $1`,
  ),
  find: prepare<SubscriptionRow>(
    `SELECT ${COLUMNS} FROM webhooks.subscriptions WHERE id = $1 AND account_id = $2`,
  ),
  lock: prepare<SubscriptionRow>(
    `SELECT ${COLUMNS} FROM webhooks.subscriptions WHERE id = $1 AND account_id = $2 FOR UPDATE`,
  ),
  delete: prepare<{ id: string }>(
    `DELETE FROM webhooks.subscriptions WHERE id = $1 AND account_id = $2 RETURNING id`,
  ),
  rotate: prepare<SubscriptionRow>(
    `UPDATE webhooks.subscriptions
        SET previous_secret_encrypted = secret_encrypted,
            previous_secret_expires_at = now() + make_interval(hours => $4),
            secret_encrypted = $3, updated_at = now()
      WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`,
  ),
  // A disabled subscription's pending deliveries are paused (off the due index) until re-enabled.
  pauseDeliveries: prepare(
    `UPDATE webhooks.deliveries SET next_attempt_at = NULL
      WHERE subscription_id = $1 AND status = 'pending' AND next_attempt_at IS NOT NULL`,
  ),
  resumeDeliveries: prepare(
    `UPDATE webhooks.deliveries SET next_attempt_at = now()
      WHERE subscription_id = $1 AND status = 'pending' AND next_attempt_at IS NULL`,
  ),
  notifyChanged: prepare(`SELECT pg_notify('${SUBSCRIPTION_CHANGED_CHANNEL}', $1)`),
};

/** All SQL on subscriptions. Every method takes the account id: no query can forget the tenant. */
@Injectable()
export class SubscriptionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async insert(tx: EntityManager, accountId: string, row: NewSubscription): Promise<SubscriptionRow> {
    const {
      rows: [inserted],
    } = await execute(tx, SQL.insert, [
      row.id,
      accountId,
      row.url,
      row.events,
      row.dialect,
      row.description,
      row.status,
      row.secretEncrypted,
    ]);
    return inserted;
  }

  async page(
    accountId: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: SubscriptionRow[]; total: number }> {
    const [{ rows }, count] = await Promise.all([
      execute(this.db, SQL.page, [accountId, limit, offset]),
      execute(this.db, SQL.count, [accountId]),
    ]);
    return { rows, total: count.rows[0].total };
  }

  async find(accountId: string, id: string): Promise<SubscriptionRow | undefined> {
    const { rows } = await execute(this.db, SQL.find, [id, accountId]);
    return rows[0];
  }

  async lock(tx: EntityManager, accountId: string, id: string): Promise<SubscriptionRow | undefined> {
    const { rows } = await execute(tx, SQL.lock, [id, accountId]);
    return rows[0];
  }

  /**
   * Applies a PATCH. Disabling pauses the subscription's pending deliveries; enabling clears the
   * reason and the failure streak and resumes them. Replicas holding queued deliveries of it are
   * told, so they drop them and claim them again with the new settings.
   */
  async update(
    tx: EntityManager,
    accountId: string,
    id: string,
    changes: SubscriptionChanges,
  ): Promise<SubscriptionRow | undefined> {
    const current = await this.lock(tx, accountId, id);
    if (!current) return undefined;
    const sets: string[] = [];
    const params: unknown[] = [id, accountId];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.url !== undefined) set('url', changes.url);
    if (changes.events !== undefined) set('events', changes.events);
    if (changes.dialect !== undefined) set('dialect', changes.dialect);
    if (changes.description !== undefined) set('description', changes.description);
    const enabling = changes.status === 'enabled' && current.status !== 'enabled';
    const disabling = changes.status === 'disabled' && current.status !== 'disabled';
    if (enabling) sets.push(`status = 'enabled', disabled_reason = NULL, failing_since = NULL`);
    if (disabling) sets.push(`status = 'disabled', disabled_reason = 'disabled_by_user'`);
    if (sets.length === 0) return current;
    const {
      rows: [updated],
    } = await query<SubscriptionRow>(
      tx,
      `UPDATE webhooks.subscriptions SET ${sets.join(', ')}, updated_at = now()
        WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`,
      params,
    );
    if (enabling) await execute(tx, SQL.resumeDeliveries, [id]);
    if (disabling) await execute(tx, SQL.pauseDeliveries, [id]);
    await execute(tx, SQL.notifyChanged, [id]);
    return updated;
  }

  /** Deletes the subscription with its deliveries and their attempts. */
  async delete(tx: EntityManager, accountId: string, id: string): Promise<boolean> {
    const { rowCount } = await execute(tx, SQL.delete, [id, accountId]);
    if (rowCount > 0) await execute(tx, SQL.notifyChanged, [id]);
    return rowCount > 0;
  }

  async rotateSecret(
    tx: EntityManager,
    accountId: string,
    id: string,
    secretEncrypted: string,
    graceHours: number,
  ): Promise<SubscriptionRow | undefined> {
    const {
      rows: [row],
    } = await execute(tx, SQL.rotate, [id, accountId, secretEncrypted, graceHours]);
    if (row) await execute(tx, SQL.notifyChanged, [id]);
    return row;
  }
}

export function toWebhookView(row: SubscriptionRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    dialect: row.dialect,
    description: row.description,
    status: row.status,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since ? row.failing_since.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
