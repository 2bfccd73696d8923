import type { TObject, TSchema } from '@sinclair/typebox';
import { compileSchema, invalidInput } from '@app/contracts';
import { DomainError, ERROR_CATALOGUE, ErrorCode, PROBLEM_CONTENT_TYPE, toProblem } from '@app/errors';
import { OPERATION_SCOPES } from '../accounts/scopes';
import { type Endpoint, pathSpellings } from '../http/endpoint';
import { COMPONENT_SCHEMAS, DocumentSchemas, DOCUMENTED_AS, plain } from './component-schemas';
import { HEADER_COMPONENTS, responseHeaders } from './response-headers';
import { exampleOf } from './schema-example';

/**
 * The OpenAPI 3.1 document, built from the endpoints (http/endpoint.ts) and their contract
 * schemas, the same objects Fastify validates and serialises with, so document and service
 * cannot drift. Every operation appears once under its canonical English path; the conversations
 * operations also under their Polish path (form B), tagged apart. Mixed spellings
 * (`/v1/conversations/{id}/wiadomości`) are served but not listed.
 */

/** Every operation can answer these, whatever it does (the HTTP framing ones before any route is known). */
const ALWAYS: ErrorCode[] = [
  'invalid_request',
  'request_timeout',
  'headers_too_large',
  'expectation_failed',
  'unauthorized',
  'insufficient_scope',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'database_unavailable',
  'overloaded',
  'upstream_timeout',
];
const POLISH_TAG = 'conversations (Polish paths)';
const REQUEST_ID_EXAMPLE = '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10';

const schemas = new DocumentSchemas(COMPONENT_SCHEMAS, DOCUMENTED_AS);

/** A body's schema (a reference when named) with a whole example made of its fields' examples. */
function mediaType(schema: TSchema) {
  return { schema: schemas.reference(schema), example: exampleOf(schemas.shown(schema)) };
}

export function openApiDocument(endpoints: Endpoint[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const spellings = pathSpellings(endpoint.path);
    const polish = spellings[spellings.length - 1];
    const forms: Array<[string, string, string]> = [[endpoint.path, endpoint.operationId, endpoint.tag]];
    if (polish !== endpoint.path) forms.push([polish, `${endpoint.operationId}Pl`, POLISH_TAG]);
    // Paths are keys as written (`/v1/rozmowy/{id}/wiadomości`): clients percent-encode them.
    for (const [path, operationId, tag] of forms) {
      paths[path] = {
        ...paths[path],
        [endpoint.method.toLowerCase()]: operation(endpoint, path, operationId, tag),
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Conversation Messaging API',
      version: '1',
      description: [
        'Conversations, messages, leads, analytics and webhooks for live chat and chatbots.',
        'Parameter names and status values are accepted in English, Malay and Polish, and responses follow `Accept-Language` (en, ms, pl), else the path (`/v1/rozmowy` answers in Polish).',
        'Errors are RFC 9457 problem details with `code` and `request_id`.',
      ].join(' '),
      contact: { name: 'API support', email: 'api-support@example.com' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    // Swagger UI at /docs sets the variable to the gateway it is served by.
    servers: [
      {
        url: '{gateway}',
        description: "The gateway's own URL, the variable `gateway`.",
        variables: { gateway: { default: 'http://localhost:3000' } },
      },
    ],
    tags: [
      {
        name: 'conversations',
        description: 'The conversation operations (form A paths: `/v1/conversations`).',
      },
      {
        name: POLISH_TAG,
        description: 'The same operations under the form B paths (`/v1/rozmowy`).',
      },
      { name: 'analytics', description: "What happened in the account's conversations." },
      {
        name: 'events',
        description:
          'Every event of the account, kept EVENT_RETENTION_DAYS (30): pages, one by id, and a live stream.',
      },
      {
        name: 'webhooks',
        description: 'Subscriptions to events, signed deliveries with retries, and their log.',
      },
    ],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key: `cms_<key id>_<secret>` (an opaque token). Each operation names the scope the key needs in its description and in `x-required-scope` (`conversations:read`, `conversations:write`, `analytics:read`, `events:read`, `webhooks:read`, `webhooks:write`); a key without it gets 403 `insufficient_scope`.',
        },
        streamToken: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description:
            'A stream token from POST /v1/events/stream-tokens, on the event stream only (browsers: EventSource cannot send an Authorization header).',
        },
      },
      schemas: schemas.components(),
      headers: HEADER_COMPONENTS,
      examples: problemExamples(),
    },
  };
}

function operation(endpoint: Endpoint, path: string, operationId: string, tag: string) {
  return {
    operationId,
    tags: [tag],
    summary: endpoint.summary,
    description: `${endpoint.description}\n\nScope: \`${OPERATION_SCOPES[endpoint.operationId]}\`.`,
    // The scope the key needs. Listed as an extension, not as a role on the bearer scheme: OpenAPI
    // linters read requirement lists as OAuth scopes, which an API key scheme cannot declare.
    'x-required-scope': OPERATION_SCOPES[endpoint.operationId],
    // The stream also takes a stream token.
    security: [{ bearer: [] }, ...(endpoint.streamToken ? [{ streamToken: [] }] : [])],
    parameters: [
      ...Object.entries(endpoint.pathParams ?? {}).map(([name, description]) => ({
        name,
        in: 'path',
        required: true,
        description,
        schema: { type: 'string', format: 'uuid' },
      })),
      ...(endpoint.query ? queryParameters(endpoint.query, endpoint.queryAliases ?? {}) : []),
      ...(endpoint.idempotent ? [IDEMPOTENCY_KEY] : []),
      ...Object.entries(endpoint.requestHeaders ?? {}).map(([name, description]) => ({
        name,
        in: 'header',
        required: false,
        description,
        schema: { type: 'string' },
      })),
      ACCEPT_LANGUAGE,
    ],
    ...(endpoint.body && {
      requestBody: {
        required: endpoint.bodyRequired ?? false,
        content: { 'application/json': mediaType(endpoint.body) },
      },
    }),
    responses: {
      [endpoint.status]: {
        description: endpoint.summary,
        headers: responseHeaders(endpoint.method, endpoint.status),
        ...(endpoint.response && {
          content: { [endpoint.streamed ?? 'application/json']: mediaType(endpoint.response) },
        }),
      },
      ...problemResponses(endpoint, path),
    },
  };
}

/**
 * Each parameter under its canonical name, with its bounds and default; its other spellings
 * after it, without a default, so that a client filling in the form sends only what it sets.
 */
function queryParameters(query: TObject, aliases: Readonly<Record<string, readonly string[]>>) {
  const required = new Set(query.required ?? []);
  return Object.entries(query.properties).flatMap(([name, property]) => {
    const { description, ...schema } = plain(property);
    const canonical = {
      name,
      in: 'query',
      required: required.has(name),
      ...(description ? { description } : {}),
      schema,
    };
    const { default: _default, ...aliasSchema } = schema;
    const others = (aliases[name] ?? []).slice(1).map((alias) => ({
      name: alias,
      in: 'query',
      required: false,
      description: `\`${name}\` in another dialect.`,
      schema: aliasSchema,
    }));
    return [canonical, ...others];
  });
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Retry-safe key (1 to 255 printable ASCII characters): the first response to the same key, path and body is replayed for 24 h.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/**
 * Any Accept-Language is accepted (browsers send `en-US,en;q=0.9`, fetch sends `*`): the first of
 * en, ms, pl by q-value wins. No example, so API consoles do not pre-fill one.
 */
const ACCEPT_LANGUAGE = {
  name: 'Accept-Language',
  in: 'header',
  required: false,
  description:
    'Output dialect of status values and event names: `en`, `ms` or `pl`, the highest q-value of these winning (others are ignored). Without one: `pl` under `/v1/rozmowy`, else `en`.',
  schema: { type: 'string' },
};

/** Problem details by status, each code with an example (a real answer of this operation's validator where it has one). */
function problemResponses(endpoint: Endpoint, path: string): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...endpoint.problems, ...ALWAYS])) {
    const { status } = ERROR_CATALOGUE[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const instance = encodeURI(
    path
      .replace(/\{id\}/, '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b')
      .replace(/\{deliveryId\}/, '9e8d7c6b-5a4f-4e3d-9c2b-1a0f9e8d7c6b'),
  );
  // The validation example is this operation's own; any other code's is shared by reference.
  const example = (code: ErrorCode) =>
    code === 'validation_failed'
      ? { summary: code, value: toProblem(validationExample(endpoint), REQUEST_ID_EXAMPLE, instance) }
      : { $ref: `#/components/examples/${code}` };
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      String(status),
      {
        description: `Problem details; code ${codes.map((code) => `\`${code}\``).join(' or ')}.`,
        headers: responseHeaders(endpoint.method, status),
        content: {
          [PROBLEM_CONTENT_TYPE]: {
            schema: { $ref: '#/components/schemas/Problem' },
            examples: Object.fromEntries(codes.map((code) => [code, example(code)])),
          },
        },
      },
    ]),
  );
}

/** One example problem per code (validation's are each operation's own). */
function problemExamples(): Record<string, unknown> {
  return Object.fromEntries(
    (Object.keys(EXAMPLE_DETAILS) as Array<keyof typeof EXAMPLE_DETAILS>).map((code) => [
      code,
      { summary: code, value: toProblem(new DomainError(code, EXAMPLE_DETAILS[code]), REQUEST_ID_EXAMPLE) },
    ]),
  );
}

/** A validation failure this operation really gives: an unknown field or parameter. */
function validationExample(endpoint: Endpoint): DomainError {
  const [schema, root, input] = endpoint.body
    ? [endpoint.body, 'body', { colour: 'blue' }]
    : [endpoint.query!, 'query', { sort: 'newest' }];
  const validate = compileSchema(schema);
  validate(input);
  return invalidInput(validate.errors ?? [], root);
}

/**
 * The shared examples. No operation answers `route_not_found` (a path none has) or
 * `method_not_allowed` (a method a path does not take), so neither is among them.
 */
const EXAMPLE_DETAILS: Record<
  Exclude<ErrorCode, 'validation_failed' | 'route_not_found' | 'method_not_allowed'>,
  string
> = {
  invalid_json: 'The request body is not valid JSON.',
  invalid_request: 'Send one Authorization header; this request has several.',
  unauthorized: 'The API key is not valid.',
  insufficient_scope: 'This API key does not have the scope conversations:write, which this operation needs.',
  not_found: 'Conversation 0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b was not found.',
  request_timeout: 'The request was not received completely in time.',
  expectation_failed: 'The only expectation served is 100-continue.',
  conversation_too_large:
    'Conversation 0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b has 61250 messages, over the 50000 one read returns; read them in pages with GET /v1/conversations/0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b/messages.',
  conversation_closed:
    'Conversation 0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b is closed; reopen it to send messages.',
  invalid_transition: 'A closed conversation cannot become pending.',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still in progress; retry shortly.',
  webhook_disabled:
    'Webhook 3f2a9c1e-7b6d-4e5f-8a9b-0c1d2e3f4a5b is disabled; enable it (PATCH status "enabled") first.',
  delivery_pending: 'This delivery is still being attempted; retry it once it has failed.',
  payload_too_large: 'The request body is larger than the limit (1 MiB by default).',
  unsupported_media_type: 'Request bodies must be JSON with Content-Type: application/json.',
  idempotency_key_reused:
    'This Idempotency-Key was used with a different path or body; use a new key for a new request.',
  replay_too_large:
    'The window holds 10452 events, over the 10000 one replay re-delivers; replay a shorter window.',
  rate_limited: "This account's plan allows 1000 requests per window; retry after 42 s.",
  too_many_streams: 'This account has 5 event streams open, as many as it may; close one first.',
  headers_too_large: 'The request line and headers are larger than the server accepts (16 KiB).',
  internal_error: 'An unexpected error occurred. Quote the request_id when reporting it.',
  service_unavailable: 'The conversations service is not running.',
  database_unavailable: 'The database is unavailable; retry shortly.',
  overloaded: 'The server is over capacity; retry after the time in Retry-After.',
  upstream_timeout: 'No reply from the service within 5000 ms.',
};
