import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DIALECTS, EVENT_NAMES, EVENT_SPELLINGS, EVENT_TYPES, type EventType } from '@app/dialects';
import { PAGE_SIZE } from './conversation-commands';
import { rpcQuery } from './rpc-envelope';
import { EventSequence, RenderedEventPayloads } from './domain-events';
import { Integer, Nullable, Strict, StringEnum, Timestamp, Uuid } from './schema-types';

/**
 * The events API and the live stream (docs/events.md): the conversations service's
 * stored events (its outbox, kept EVENT_RETENTION_DAYS) as the queries between services see them
 * (canonical types) and as the public API renders them (types and statuses in the output dialect).
 */

const EVENT_ID = Uuid({
  description: 'The CloudEvent `id`, also the `webhook-id` of its webhook deliveries.',
  examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'],
});

/** An event id in a path or `Last-Event-ID`; one that is not a UUID names nothing: a 404. */
export const EventId = Uuid({ 'x-not-found': 'Event', examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'] });

const eventFields = <T extends TSchema, D extends TSchema>(type: T, data: D) => ({
  id: EVENT_ID,
  type,
  created_at: Timestamp({ description: 'When the change that caused it was made (the CloudEvent `time`).' }),
  conversation_id: Uuid({ examples: ['0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b'] }),
  sequence: EventSequence({
    description:
      "Position among its conversation's events: 1 for the first, +1 for each next (the CloudEvent extension `sequence`).",
  }),
  data,
});

/** Any type's data, as the services pass it on: each type's own shape is RenderedEventPayloads'. */
const AnyEventData = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'As in the CloudEvent and the webhook body (AsyncAPI: docs/asyncapi.yaml); statuses in the output dialect.',
  },
);

export const EventView = Strict(
  eventFields(StringEnum(EVENT_TYPES, { examples: ['message.received'] }), AnyEventData),
);
export type EventView = Static<typeof EventView>;

/** What the gateway serialises an event with, whatever its type (each type's shape: TypedEventResponses). */
export const EventResponse = Strict(
  eventFields(
    StringEnum(EVENT_SPELLINGS, { description: 'In the output dialect.', examples: ['message.received'] }),
    AnyEventData,
  ),
);

/**
 * An event of each type as the events API, the stream and webhooks show it: its name in any
 * dialect and its own data. API descriptions offer these as a union discriminated by `type`.
 */
const typedEventResponse = (type: EventType) => {
  const names = [...new Set(DIALECTS.map((dialect) => EVENT_NAMES[type][dialect]))];
  const typeSchema = StringEnum(names, { description: 'In the output dialect.', examples: [type] });
  return Strict(eventFields(typeSchema, RenderedEventPayloads[type]), {
    description: `A \`${type}\` event.`,
  });
};
export const TypedEventResponses = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, typedEventResponse(type)]),
) as { [T in EventType]: ReturnType<typeof typedEventResponse> };

const CURSOR = Type.String({
  minLength: 1,
  maxLength: 128,
  description: '`pagination.next` of the previous page: the page after it.',
});

const eventFilterFields = {
  conversation_id: Type.Optional(
    Uuid({
      description: "Only this conversation's events.",
      examples: ['0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b'],
    }),
  ),
  created_after: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Only events created after this instant (ISO 8601 with an offset, exclusive).',
      examples: ['2026-11-01T00:00:00Z'],
    }),
  ),
  created_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'Only events created before this instant (exclusive).',
      examples: ['2026-12-01T00:00:00+01:00'],
    }),
  ),
};

/** `GET /v1/events`'s query: `type` in any dialect. */
export const ListEventsParams = Strict({
  type: Type.Optional(
    Type.Unsafe<string>({
      type: 'string',
      maxLength: 100,
      'x-event-name': false,
      description: 'Only events of this type, named in any dialect.',
      examples: ['message.received', 'mesej.diterima', 'wiadomość.odebrana'],
    }),
  ),
  ...eventFilterFields,
  limit: Type.Optional(Integer(1, PAGE_SIZE.max, { description: 'Page size, default 20 (alias `had`).' })),
  after: Type.Optional(CURSOR),
});
export type ListEventsParams = Static<typeof ListEventsParams>;

export const EventListResponse = Strict({
  data: Type.Array(EventResponse, { description: 'Newest first.' }),
  pagination: Strict({
    limit: Integer(1, PAGE_SIZE.max, { examples: [20] }),
    next: Nullable(Type.String(), {
      description: 'Pass as `after` for the next page; null on the last page.',
      examples: ['ZTEuMTczMjQ5MDAwMDAwMC4xMjM0'],
    }),
  }),
});

// Between the gateway and the conversations service (canonical types).
export const ListEventsQuery = Strict({
  type: Type.Optional(StringEnum(EVENT_TYPES)),
  ...eventFilterFields,
  limit: Integer(1, PAGE_SIZE.max),
  after: Type.Optional(CURSOR),
});
export type ListEventsQuery = Static<typeof ListEventsQuery>;

export const EventPage = Strict({ data: Type.Array(EventView), next: Nullable(Type.String()) });
export type EventPage = Static<typeof EventPage>;

export const GetEventQuery = Strict({ eventId: EventId });

/** Events published after `afterEventId`, in the order the broker received them (the stream's resume). */
export const ReplayEventsQuery = Strict({ afterEventId: Uuid(), limit: Integer(1, 1000) });
export type ReplayEventsQuery = Static<typeof ReplayEventsQuery>;
export const ReplayPage = Strict({ data: Type.Array(EventView), more: Type.Boolean() });
export type ReplayPage = Static<typeof ReplayPage>;

/**
 * The account's events of some types created in [since, until), oldest first (a webhook replay
 * reads them in pages: `after` is the previous page's `next`).
 */
const eventWindow = {
  types: Type.Array(StringEnum(EVENT_TYPES), { minItems: 1 }),
  since: Timestamp(),
  until: Timestamp(),
};
export const EventWindowQuery = Strict({
  ...eventWindow,
  limit: Integer(1, 1000),
  after: Type.Optional(CURSOR),
});
export type EventWindowQuery = Static<typeof EventWindowQuery>;
export const EventWindowCountQuery = Strict(eventWindow);
export type EventWindowCountQuery = Static<typeof EventWindowCountQuery>;
export const EventWindowCount = Strict({ count: Integer(0, 2_147_483_647) });

/** The conversations service's event queries. */
export const EventRpc = {
  list: rpcQuery('events.list', ListEventsQuery, EventPage),
  get: rpcQuery('events.get', GetEventQuery, EventView),
  replay: rpcQuery('events.replay', ReplayEventsQuery, ReplayPage),
  window: rpcQuery('events.window', EventWindowQuery, EventPage),
  countWindow: rpcQuery('events.count-window', EventWindowCountQuery, EventWindowCount),
};

/** How long a stream token opens streams (docs/events.md, "Streams in a browser"). */
export const STREAM_TOKEN_TTL_SECONDS = 300;

export const StreamTokenResponse = Strict({
  token: Type.String({
    description:
      'Opens `GET /v1/events/stream?token=` (and nothing else) for the key that asked, until `expires_at`.',
    examples: ['st_q9Jd0v2mB1x8p7Kc4L0nV3sWf6Zt2Yh5Ue8Ri1Oa9Qo'],
  }),
  expires_at: Timestamp({ description: `${STREAM_TOKEN_TTL_SECONDS / 60} minutes from now.` }),
});

/** `GET /v1/events/stream`'s query: where to resume, for clients that cannot send Last-Event-ID. */
export const StreamEventsParams = Strict({
  token: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        'A stream token (POST /v1/events/stream-tokens) instead of the Authorization header, for browsers: EventSource cannot send headers.',
      examples: ['st_q9Jd0v2mB1x8p7Kc4L0nV3sWf6Zt2Yh5Ue8Ri1Oa9Qo'],
    }),
  ),
  last_event_id: Type.Optional(
    Uuid({
      description:
        'Resume after this event (the `id:` of the last one received), like the `Last-Event-ID` header; unknown or expired ids are a 400.',
      examples: ['7c9e6679-7425-40de-944b-e07fc1f90ae7'],
    }),
  ),
});
export type StreamEventsParams = Static<typeof StreamEventsParams>;

/** The stream's body, as OpenAPI describes it (Server-Sent Events; each `data:` is an EventResponse). */
export const EventStreamBody = Type.String({
  description:
    'Server-Sent Events: per event `id:` (the event id), `event:` (its type in the output dialect) and `data:` (the event object of GET /v1/events/{id}); comment lines (`:`) as heartbeats at least every 15 s.',
  /** Each frame's `data:` (API descriptions show it as the union of the event types). */
  'x-sse-data': EventResponse,
  examples: [
    'id: 7c9e6679-7425-40de-944b-e07fc1f90ae7\nevent: message.received\ndata: {"id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","type":"message.received","created_at":"2026-03-02T09:15:27.412Z","conversation_id":"0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b","sequence":2,"data":{}}\n\n',
  ],
});
