import { Injectable } from '@nestjs/common';
import { EventPage, EventRpc, EventView, ReplayPage, RpcCall } from '@app/contracts';
import { DomainError } from '@app/errors';
import { EventPosition, EventsRepository } from './events.repository';

/** The longest a resume waits for the relay to mark what it has published (well under RPC_TIMEOUT_MS). */
const SETTLE_MS = 2000;
const SETTLE_POLL_MS = 20;

/**
 * The `after` cursor of an events page: opaque to clients (base64url), it carries the creation
 * time and outbox id of the last event read. It names nothing outside the account it is used
 * with (every query is the account's), so it needs no seal.
 */
const CURSOR = /^e1\.(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\.(\d{1,18})$/;

const encodeCursor = (position: EventPosition) =>
  Buffer.from(`e1.${position.createdAt}.${position.id}`).toString('base64url');

function decodeCursor(cursor: string): EventPosition {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match || Number.isNaN(Date.parse(match[1]))) {
    throw DomainError.validation([
      { field: 'after', message: 'must be a pagination.next cursor of this endpoint' },
    ]);
  }
  return { createdAt: match[1], id: match[2] };
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

@Injectable()
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  async list(request: RpcCall<typeof EventRpc.list>): Promise<EventPage> {
    const { limit, after, ...filters } = request.data;
    const page = await this.events.page(
      request.accountId,
      filters,
      limit,
      after === undefined ? undefined : decodeCursor(after),
    );
    const last = page.rows[page.rows.length - 1];
    return {
      data: page.rows.map(({ position: _position, ...event }) => event),
      next: page.more ? encodeCursor(last.position) : null,
    };
  }

  async get(request: RpcCall<typeof EventRpc.get>): Promise<EventView> {
    const event = await this.events.get(request.accountId, request.data.eventId);
    if (!event) throw new DomainError('not_found', `Event ${request.data.eventId} was not found.`);
    return event;
  }

  /**
   * The account's events published after `afterEventId`, in publication order (the stream's
   * resume; the caller subscribed to live events first). An event the relay published before the
   * caller subscribed may not be marked yet: first wait (bounded) until every event of the account
   * unmarked now is marked, so none of them is missing from what follows (they do not come live).
   */
  async replay(request: RpcCall<typeof EventRpc.replay>): Promise<ReplayPage> {
    const { accountId, data } = request;
    if ((await this.events.publicationPosition(accountId, data.afterEventId)) === undefined) {
      throw DomainError.validation([
        {
          field: 'last_event_id',
          message: 'is not an event of this account that is still retained (EVENT_RETENTION_DAYS)',
        },
      ]);
    }
    await this.settle(accountId, request.answerBy);
    const position = await this.events.publicationPosition(accountId, data.afterEventId);
    if (position === null || position === undefined) {
      throw new DomainError('service_unavailable', 'Events are not being published; resume again shortly.');
    }
    const page = await this.events.publishedAfter(accountId, position, data.limit);
    return { data: page.rows, more: page.more };
  }

  private async settle(accountId: string, answerBy = Date.now() + SETTLE_MS): Promise<void> {
    const ids = await this.events.unpublished(accountId);
    const until = Math.min(Date.now() + SETTLE_MS, answerBy - SETTLE_POLL_MS * 5);
    while (ids.length > 0 && (await this.events.countUnpublished(ids)) > 0 && Date.now() < until) {
      await delay(SETTLE_POLL_MS);
    }
  }
}
