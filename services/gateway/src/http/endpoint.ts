import { applyDecorators, Header, HttpCode, RequestMapping, RequestMethod } from '@nestjs/common';
import { RouteConfig, RouteSchema } from '@nestjs/platform-fastify';
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { COLLECTION_SEGMENTS, MESSAGES_SEGMENTS } from '@app/dialects';
import type { ErrorCode } from '@app/errors';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/**
 * One operation of the public API, described once: the route the handler serves, the schemas
 * Fastify validates and serialises with (compiled at start-up), and everything the OpenAPI
 * document says about it (openapi/openapi-document.ts builds the document from these).
 */
export interface Endpoint {
  /** OpenAPI operationId, e.g. `listConversations`. */
  operationId: string;
  method: Method;
  /**
   * Canonical path with `{param}` placeholders, e.g. `/v1/conversations/{id}`. It is also served
   * in every mix of its segments' other spellings (`/v1/rozmowy/{id}/wiadomości`): pathSpellings.
   */
  path: string;
  tag: 'conversations' | 'webhooks' | 'analytics' | 'events';
  summary: string;
  /** What a reader of the API reference needs beyond the summary (every operation has one). */
  description: string;
  /** Path parameters: name -> description (every one is a UUID; a malformed one is a 404). */
  pathParams?: Record<string, string>;
  query?: TObject;
  /** Other spellings of query parameters (canonical name -> every accepted name, canonical first). */
  queryAliases?: Readonly<Record<string, readonly string[]>>;
  body?: TObject;
  /** Whether a request must have a body (create accepts none: it starts an empty conversation). */
  bodyRequired?: boolean;
  /** Also authenticated by a stream token in `?token=` instead of the Authorization header. */
  streamToken?: true;
  /** Accepts `Idempotency-Key` (every POST). */
  idempotent?: boolean;
  /**
   * The success response carries a secret (a webhook's signing secret): the stored response of its
   * Idempotency-Key leaves it out, and a replay asks the service again under the same command id
   * (the service keeps the secret encrypted in its stored reply) instead of sending the stored body.
   */
  secretInResponse?: true;
  status: 200 | 201 | 202 | 204;
  /** The success response's body; none for 204. */
  response?: TSchema;
  /**
   * A streamed success response (Server-Sent Events), written by the handler itself: documented,
   * not serialised by Fastify. JSON otherwise.
   */
  streamed?: 'text/event-stream';
  /** Request headers the operation reads besides the usual ones: name -> description. */
  requestHeaders?: Record<string, string>;
  /** What the operation can answer besides success (those every operation shares are added). */
  problems: ErrorCode[];
}

/** What any operation that reads a JSON body can answer about it. */
export const BODY_PROBLEMS = [
  'validation_failed',
  'invalid_json',
  'request_timeout',
  'payload_too_large',
  'unsupported_media_type',
] as const satisfies readonly ErrorCode[];
/** The body of an action that takes no input: if sent, it must be an empty object. */
export const NO_INPUT = Type.Object(
  {},
  { additionalProperties: false, description: 'Nothing; the body may be omitted.' },
);
/** What an operation that takes an `Idempotency-Key` can answer about the key. */
export const KEY_PROBLEMS = [
  'idempotency_key_reused',
  'idempotency_key_in_use',
] as const satisfies readonly ErrorCode[];

/** The route path as Fastify spells it: `{id}` -> `:id`. */
export const routePath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

const SEGMENT_SPELLINGS: ReadonlyArray<readonly string[]> = [COLLECTION_SEGMENTS, MESSAGES_SEGMENTS];

/**
 * Every spelling of a path (docs/dialects.md: each rendering is accepted anywhere, mixed
 * freely): canonical first, the wholly Polish one (form B) last.
 */
export function pathSpellings(path: string): string[] {
  return path.split('/').reduce<string[]>(
    (prefixes, segment, index) => {
      const spellings = SEGMENT_SPELLINGS.find((names) => names[0] === segment) ?? [segment];
      return prefixes.flatMap((prefix) =>
        spellings.map((name) => (index === 0 ? name : `${prefix}/${name}`)),
      );
    },
    [''],
  );
}

/** The media type of JSON responses, also those a handler returns as bytes (a service reply's JSON). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Nest route, status, Fastify schemas and the endpoint itself (for hooks:
 * `request.routeOptions.config.endpoint`). A JSON response's media type is set up front, so a
 * handler may return the body as JSON bytes (sent as they are) as well as a value (serialized
 * with the response schema).
 */
export function ApiEndpoint(endpoint: Endpoint): MethodDecorator {
  const paths = pathSpellings(endpoint.path).map(routePath);
  const json = endpoint.response !== undefined && !endpoint.streamed;
  return applyDecorators(
    RequestMapping({ path: paths, method: RequestMethod[endpoint.method] }),
    HttpCode(endpoint.status),
    ...(json ? [Header('Content-Type', JSON_CONTENT_TYPE)] : []),
    RouteSchema({
      ...(endpoint.query && { querystring: endpoint.query }),
      ...(endpoint.body && { body: endpoint.body }),
      ...(endpoint.response && !endpoint.streamed && { response: { [endpoint.status]: endpoint.response } }),
    }),
    RouteConfig({ endpoint }),
  );
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The API operation a route serves (absent on health, metrics and docs). */
    endpoint?: Endpoint;
  }
}
