import { Injectable } from '@nestjs/common';
import {
  type CursorKind,
  EventPage,
  EventRpc,
  EventView,
  invalidCursor,
  NOT_OURS,
  openCursor,
  ReplayPage,
  RpcCall,
  SnapshotSealer,
} from '@app/contracts';
import { DomainError } from '@app/errors';
import { EventPosition, EventsRepository } from './events.repository';

/** The longest a resume waits for the relay to mark what it has published (well under RPC_TIMEOUT_MS). */
const SETTLE_MS = 2000;
const SETTLE_POLL_MS = 20;

/**
 * The `after` cursor of an events page (docs/api-conventions.md, "Cursors"): the creation time and
 * outbox id of the last event read, sealed for the account and this endpoint like a list
 * snapshot. The outbox id counts every account's events, so it is never shown; a cursor of
 * another account, or changed in any byte, is a 400. Cursors of 1.0.0 (`e1.` in plain base64url)
 * are refused with a message of their own.
 */
const EVENTS_CURSOR: CursorKind = {
  purpose: 'events-cursor',
  format: /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\.(\d{1,18})$/,
  unsealedPrefix: 'e1.',
};

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventsRepository,
    private readonly sealer: SnapshotSealer,
  ) {}

  async list(request: RpcCall<typeof EventRpc.list>): Promise<EventPage> {
    const { limit, after, ...filters } = request.data;
    const page = await this.events.page(
      request.accountId,
      filters,
      limit,
      after === undefined ? undefined : this.positionAfter(after, request.accountId),
    );
    return this.toPage(page, request.accountId);
  }

  /** A page of a webhook replay's window, oldest first. */
  async window(request: RpcCall<typeof EventRpc.window>): Promise<EventPage> {
    const { limit, after, ...window } = request.data;
    const page = await this.events.window(
      request.accountId,
      window,
      limit,
      after === undefined ? undefined : this.positionAfter(after, request.accountId),
    );
    return this.toPage(page, request.accountId);
  }

  async countWindow(request: RpcCall<typeof EventRpc.countWindow>): Promise<{ count: number }> {
    return { count: await this.events.countWindow(request.accountId, request.data) };
  }

  private positionAfter(cursor: string, accountId: string): EventPosition {
    const [createdAt, id] = openCursor(this.sealer, EVENTS_CURSOR, cursor, accountId);
    if (Number.isNaN(Date.parse(createdAt))) throw invalidCursor(NOT_OURS);
    return { createdAt, id };
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

  private toPage(
    page: { rows: Array<EventView & { position: EventPosition }>; more: boolean },
    accountId: string,
  ): EventPage {
    const last = page.rows[page.rows.length - 1];
    return {
      data: page.rows.map(({ position: _position, ...event }) => event),
      next: page.more
        ? this.sealer.sealAs(
            `${last.position.createdAt}.${last.position.id}`,
            accountId,
            EVENTS_CURSOR.purpose,
          )
        : null,
    };
  }

  private async settle(accountId: string, answerBy = Date.now() + SETTLE_MS): Promise<void> {
    const ids = await this.events.unpublished(accountId);
    const until = Math.min(Date.now() + SETTLE_MS, answerBy - SETTLE_POLL_MS * 5);
    while (ids.length > 0 && (await this.events.countUnpublished(ids)) > 0 && Date.now() < until) {
      await delay(SETTLE_POLL_MS);
    }
  }
}
