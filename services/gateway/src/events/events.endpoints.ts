import {
  EventListResponse,
  EventResponse,
  EventStreamBody,
  ListEventsParams,
  StreamEventsParams,
  StreamTokenResponse,
} from '@app/contracts';
import { LIST_QUERY_ALIASES } from '@app/dialects';
import { BODY_PROBLEMS, type Endpoint, KEY_PROBLEMS, NO_INPUT } from '../http/endpoint';

/** The events API (docs/events.md). */
export const EventEndpoints = {
  list: {
    operationId: 'listEvents',
    method: 'GET',
    path: '/v1/events',
    tag: 'events',
    summary: "The account's events, newest first",
    description:
      'Every event of the account (all types, conversation.updated and message.sent included), kept EVENT_RETENTION_DAYS (30 by default). Filters combine; `type` may be named in any dialect. Cursor paging: pass `pagination.next` as `after` until it is null.',
    query: ListEventsParams,
    queryAliases: { limit: LIST_QUERY_ALIASES.limit },
    status: 200,
    response: EventListResponse,
    problems: ['validation_failed'],
  },
  stream: {
    operationId: 'streamEvents',
    method: 'GET',
    path: '/v1/events/stream',
    tag: 'events',
    summary: "The account's events as they happen (Server-Sent Events)",
    description:
      'Resume with `Last-Event-ID` (or `last_event_id`): every event after that one follows, then live ones, with no gap and no duplicate. At most STREAMS_PER_ACCOUNT (5) streams are open per account across every gateway: the next is 429 `too_many_streams`. Opening counts once against the plan rate limit. A client too far behind is disconnected and resumes.',
    query: StreamEventsParams,
    requestHeaders: {
      'Last-Event-ID': 'Resume after this event id (EventSource sends it when it reconnects).',
    },
    streamToken: true,
    status: 200,
    response: EventStreamBody,
    streamed: 'text/event-stream',
    problems: ['validation_failed', 'too_many_streams'],
  },
  createStreamToken: {
    operationId: 'createStreamToken',
    method: 'POST',
    path: '/v1/events/stream-tokens',
    tag: 'events',
    summary: 'A short-lived token that opens the event stream in a browser',
    description:
      "Ask for it on your server, with the API key, and hand the token to the page: `new EventSource(`${API}/events/stream?token=${token}`)` needs no Authorization header (which EventSource cannot send). It opens the stream of the key's account for STREAM_TOKEN_TTL_SECONDS (5 minutes), reconnects included, and authenticates nothing else (401 anywhere else). The page's origin must be in CORS_ORIGINS.",
    body: NO_INPUT,
    idempotent: true,
    status: 201,
    response: StreamTokenResponse,
    problems: [...BODY_PROBLEMS, ...KEY_PROBLEMS],
  },
  get: {
    operationId: 'getEvent',
    method: 'GET',
    path: '/v1/events/{id}',
    tag: 'events',
    summary: 'One event (its id is the CloudEvent id and the webhook-id)',
    description:
      'The event as the events list and the stream show it, while it is kept (EVENT_RETENTION_DAYS).',
    pathParams: { id: 'Event id.' },
    status: 200,
    response: EventResponse,
    problems: ['not_found'],
  },
} satisfies Record<string, Endpoint>;
