import { DELIVERY_STATUSES, DeliveryStatus, SubscribedEvent, ALL_EVENTS } from '@app/contracts';
import { parseEventType } from '@app/dialects';
import { DomainError, FieldError } from '@app/errors';
import { parseListQuery } from '../conversations/list-query';
import { ALL_EVENT_SPELLINGS } from './dto/webhook-bodies.dto';

type RawQuery = Record<string, string | string[] | undefined>;

/** `limit`/`offset` in any spelling, with the same rules and errors as the conversations list. */
export function parsePage(raw: RawQuery): { limit: number; offset: number } {
  const { status: _status, stan: _stan, snapshot: _snapshot, ...paging } = raw;
  const { limit, offset } = parseListQuery(paging);
  return { limit, offset };
}

/** The deliveries list: paging plus an optional `status` (alias `stan`) of pending, succeeded, failed. */
export function parseDeliveriesQuery(raw: RawQuery): {
  limit: number;
  offset: number;
  status?: DeliveryStatus;
} {
  const errors: FieldError[] = [];
  let page = { limit: 0, offset: 0 };
  try {
    page = parsePage(raw);
  } catch (error) {
    if (!(error instanceof DomainError) || !error.errors) throw error;
    errors.push(...error.errors);
  }
  const given = [...new Set([raw.status, raw.stan].flat().filter((v): v is string => v !== undefined))];
  let status: DeliveryStatus | undefined;
  if (given.length > 1) {
    errors.push({ field: 'status', message: `conflicting values ${given.join(' and ')}` });
  } else if (given.length === 1) {
    if ((DELIVERY_STATUSES as readonly string[]).includes(given[0])) status = given[0] as DeliveryStatus;
    else errors.push({ field: 'status', message: `must be one of: ${DELIVERY_STATUSES.join(', ')}` });
  }
  if (errors.length > 0) throw DomainError.validation(errors);
  return { ...page, ...(status && { status }) };
}

/** Event names in any dialect (or `*`) to canonical types; an unknown name lists the valid ones. */
export function parseEventNames(names: string[], field = 'events'): SubscribedEvent[] {
  const unknown: string[] = [];
  const parsed: SubscribedEvent[] = [];
  for (const name of names) {
    if (name.trim() === ALL_EVENTS) parsed.push(ALL_EVENTS);
    else {
      const type = parseEventType(name);
      if (type) parsed.push(type);
      else unknown.push(name);
    }
  }
  if (unknown.length > 0) {
    throw DomainError.validation([
      {
        field,
        message: `unknown event ${unknown.map((n) => JSON.stringify(n.slice(0, 100))).join(', ')}; valid names: ${ALL_EVENT_SPELLINGS.join(', ')}`,
      },
    ]);
  }
  return parsed;
}
