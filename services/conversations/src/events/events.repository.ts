import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventView, EventWindowCountQuery, ListEventsQuery } from '@app/contracts';
import { execute, prepare, preparedOnce } from '@app/database';

/** Timestamps leave Postgres as ISO 8601 UTC with milliseconds, exactly as the API renders them. */
const EVENT_COLUMNS = `o.event_id AS id, o.type,
  to_char(o.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
  o.conversation_id, o.sequence, o.envelope -> 'data' AS data`;

/** Where a newest-first page continues: the last row's creation time and outbox id. */
export interface EventPosition {
  createdAt: string;
  id: string;
}

type ListFilters = Pick<ListEventsQuery, 'type' | 'conversation_id' | 'created_after' | 'created_before'>;

/** Each filter's condition, given its parameter; $1..$2 are the account and the page size. */
const FILTER_CONDITIONS: Record<keyof ListFilters, (param: string) => string> = {
  type: (param) => `o.type = ${param}`,
  conversation_id: (param) => `o.conversation_id = ${param}::uuid`,
  created_after: (param) => `o.created_at > ${param}::timestamptz`,
  created_before: (param) => `o.created_at < ${param}::timestamptz`,
};

const SQL = {
  get: prepare<EventView>(
    `SELECT ${EVENT_COLUMNS} FROM conversations.outbox o WHERE o.event_id = $1 AND o.account_id = $2`,
  ),
  position: prepare<{ published_seq: string | null }>(
    `SELECT published_seq FROM conversations.outbox WHERE event_id = $1 AND account_id = $2 LIMIT 1`,
  ),
  unpublished: prepare<{ id: string }>(
    `SELECT id FROM conversations.outbox WHERE published_at IS NULL AND account_id = $1`,
  ),
  stillUnpublished: prepare<{ count: number }>(
    `SELECT count(*)::int AS count FROM conversations.outbox WHERE id = ANY($1::bigint[]) AND published_seq IS NULL`,
  ),
  /** A replay's window, oldest first, after a position (`$5`, `$6`: null for the first page). */
  window: prepare<EventView & { outbox_id: string }>(
    `SELECT ${EVENT_COLUMNS}, o.id AS outbox_id FROM conversations.outbox o
      WHERE o.account_id = $1 AND o.type = ANY($2::text[])
        AND o.created_at >= $3::timestamptz AND o.created_at < $4::timestamptz
        AND ($5::timestamptz IS NULL OR (o.created_at, o.id) > ($5::timestamptz, $6::bigint))
      ORDER BY o.created_at, o.id LIMIT $7::int + 1`,
  ),
  countWindow: prepare<{ count: number }>(
    `SELECT count(*)::int AS count FROM conversations.outbox o
      WHERE o.account_id = $1 AND o.type = ANY($2::text[])
        AND o.created_at >= $3::timestamptz AND o.created_at < $4::timestamptz`,
  ),
  publishedAfter: prepare<EventView>(
    `SELECT ${EVENT_COLUMNS} FROM conversations.outbox o
      WHERE o.account_id = $1 AND o.published_seq > $2
      ORDER BY o.published_seq LIMIT $3::int + 1`,
  ),
};

/**
 * The stored events (the outbox rows, kept EVENT_RETENTION_DAYS), always of one account. Rows
 * committed but not yet published are events like any other: the change that made them happened.
 */
@Injectable()
export class EventsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A newest-first page after `after` (exclusive), one row more than asked to tell whether more follow. */
  async page(
    accountId: string,
    filters: ListFilters,
    limit: number,
    after?: EventPosition,
  ): Promise<{ rows: Array<EventView & { position: EventPosition }>; more: boolean }> {
    const used = (Object.keys(FILTER_CONDITIONS) as Array<keyof ListFilters>).filter(
      (name) => filters[name] !== undefined,
    );
    const values: unknown[] = used.map((name) => filters[name]);
    const conditions = used.map((name, i) => ` AND ${FILTER_CONDITIONS[name](`$${i + 3}`)}`);
    if (after) {
      conditions.push(
        ` AND (o.created_at, o.id) < ($${values.length + 3}::timestamptz, $${values.length + 4}::bigint)`,
      );
      values.push(after.createdAt, after.id);
    }
    const statement = preparedOnce<EventView & { outbox_id: string }>(
      `SELECT ${EVENT_COLUMNS}, o.id AS outbox_id FROM conversations.outbox o
        WHERE o.account_id = $1${conditions.join('')}
        ORDER BY o.created_at DESC, o.id DESC LIMIT $2::int + 1`,
    );
    const { rows } = await execute(this.db, statement, [accountId, limit, ...values]);
    return {
      rows: rows.slice(0, limit).map(({ outbox_id, ...event }) => ({
        ...event,
        position: { createdAt: event.created_at, id: outbox_id },
      })),
      more: rows.length > limit,
    };
  }

  /** An oldest-first page of the events of `types` created in [since, until), after `after`. */
  async window(
    accountId: string,
    { types, since, until }: EventWindowCountQuery,
    limit: number,
    after?: EventPosition,
  ): Promise<{ rows: Array<EventView & { position: EventPosition }>; more: boolean }> {
    const { rows } = await execute(this.db, SQL.window, [
      accountId,
      types,
      since,
      until,
      after?.createdAt ?? null,
      after?.id ?? null,
      limit,
    ]);
    return {
      rows: rows.slice(0, limit).map(({ outbox_id, ...event }) => ({
        ...event,
        position: { createdAt: event.created_at, id: outbox_id },
      })),
      more: rows.length > limit,
    };
  }

  async countWindow(accountId: string, { types, since, until }: EventWindowCountQuery): Promise<number> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.countWindow, [accountId, types, since, until]);
    return row.count;
  }

  async get(accountId: string, eventId: string): Promise<EventView | undefined> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.get, [eventId, accountId]);
    return row;
  }

  /**
   * An event's place in publication order: null while the relay has not marked it published,
   * undefined if the account has no such event (unknown, another account's, or purged).
   */
  async publicationPosition(accountId: string, eventId: string): Promise<string | null | undefined> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.position, [eventId, accountId]);
    return row ? row.published_seq : undefined;
  }

  /** The outbox ids of the account's events not yet marked published. */
  async unpublished(accountId: string): Promise<string[]> {
    const { rows } = await execute(this.db, SQL.unpublished, [accountId]);
    return rows.map((row) => row.id);
  }

  async countUnpublished(ids: string[]): Promise<number> {
    const {
      rows: [row],
    } = await execute(this.db, SQL.stillUnpublished, [ids]);
    return row.count;
  }

  /** The account's events published after `position`, in publication order. */
  async publishedAfter(
    accountId: string,
    position: string,
    limit: number,
  ): Promise<{ rows: EventView[]; more: boolean }> {
    const { rows } = await execute(this.db, SQL.publishedAfter, [accountId, position, limit]);
    return { rows: rows.slice(0, limit), more: rows.length > limit };
  }
}
