/**
 * The one error vocabulary of the product. A code never changes once published; the same codes
 * cross RabbitMQ in RPC replies and are rendered as RFC 9457 problem details by the gateway,
 * whose `type` is the page it serves for the code (`/problems/validation-failed`) with `help`.
 */
export const ERROR_CATALOGUE = {
  validation_failed: {
    status: 400,
    title: 'Request validation failed',
    help: 'A body field, query parameter or header has a wrong type, value or length, is missing, or is not one the endpoint knows. `errors` lists each problem by field (at most 20; `detail` counts the rest). Fix the request and send it again; an Idempotency-Key is not bound by a refused request.',
  },
  invalid_json: {
    status: 400,
    title: 'Malformed JSON body',
    help: 'The body is not JSON, or not UTF-8. Send UTF-8 JSON with `Content-Type: application/json`.',
  },
  invalid_request: {
    status: 400,
    title: 'Malformed HTTP request',
    help: 'The HTTP request itself could not be read or is not one the server serves: an unknown method or CONNECT, an HTTP version other than 1.x, a raw space or control character in the URL or a header, no Host header or several, a Transfer-Encoding other than chunked alone, or more than one Authorization header. The connection is closed after the answer. Send a well-formed request; HTTP libraries do.',
  },
  unauthorized: {
    status: 401,
    title: 'Missing or invalid API key',
    help: 'Send `Authorization: Bearer <API key>` with a key that exists and is not revoked. Keys are created with `cms keys:create` (see the README).',
  },
  insufficient_scope: {
    status: 403,
    title: 'API key lacks the scope',
    help: 'The key is valid but restricted, and its scopes do not include the one this operation needs, named in `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` and in `detail`. Use a key with that scope, or create one (`cms keys:create --scopes`; see "Keys and scopes" in docs/api-conventions.md). The request counts against the rate limit.',
  },
  not_found: {
    status: 404,
    title: 'Resource not found',
    help: "No such resource in this account: the id is unknown, malformed, or another account's (never revealed). Check the id.",
  },
  route_not_found: {
    status: 404,
    title: 'No such endpoint',
    help: 'No endpoint has this path. The API is under `/v1`; the OpenAPI document at `/openapi.json` lists every operation.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    help: 'The path exists but not for this method; the `Allow` header lists the methods it takes.',
  },
  request_timeout: {
    status: 408,
    title: 'Request not received in time',
    help: "The request was not received completely within the server's time limit. Send it again.",
  },
  conversation_closed: {
    status: 409,
    title: 'Conversation is closed',
    help: 'Messages cannot be sent into a closed conversation. Reopen it first with `PATCH {"status": "active"}`.',
  },
  invalid_transition: {
    status: 409,
    title: 'Status transition not allowed',
    help: 'Conversations move active <-> pending, active or pending -> closed, and closed -> active (reopen). Any other change of status is refused; the same status again is a no-op 200.',
  },
  idempotency_key_in_use: {
    status: 409,
    title: 'Idempotency key in use',
    help: 'A request with the same Idempotency-Key is still being processed. Retry after a short wait: you will then get its response.',
  },
  webhook_disabled: {
    status: 409,
    title: 'Webhook is disabled',
    help: 'The webhook is disabled (by you, or because its endpoint answered 410 or failed for 5 days). Enable it with `PATCH {"status": "enabled"}` first.',
  },
  delivery_pending: {
    status: 409,
    title: 'Delivery is still pending',
    help: 'The delivery is still being attempted on its retry schedule. Retry it manually once it has failed.',
  },
  payload_too_large: {
    status: 413,
    title: 'Request body too large',
    help: 'The body is larger than the limit (1 MiB by default). Send less: message content is at most 10,000 characters and metadata at most 16 KiB.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    help: 'Bodies must be uncompressed UTF-8 JSON with `Content-Type: application/json` (no other Content-Encoding or charset).',
  },
  expectation_failed: {
    status: 417,
    title: 'Expectation not supported',
    help: 'The request carries an `Expect` header other than `100-continue`, the only expectation the server meets. Send the request without it.',
  },
  conversation_too_large: {
    status: 422,
    title: 'Conversation too large to read whole',
    help: 'The conversation has more messages than one response carries (50,000). Read them in pages with `GET /v1/conversations/{id}/messages`.',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused',
    help: 'This Idempotency-Key was used with another path or body within 24 hours. Use a new key for a new request.',
  },
  replay_too_large: {
    status: 422,
    title: 'Replay window too large',
    help: 'One replay re-delivers at most 10,000 events, and the window given holds more. Replay it in shorter windows (`since`/`until`), or fewer `types`.',
  },
  rate_limited: {
    status: 429,
    title: 'Rate limit exceeded',
    help: "The account's plan allows a number of requests in a sliding window (by default per hour: trial 100, pro 1,000, business 10,000). Wait the seconds `Retry-After` gives; `RateLimit` and `X-RateLimit-*` headers show what is left.",
  },
  too_many_streams: {
    status: 429,
    title: 'Too many open event streams',
    help: "The account already has as many `GET /v1/events/stream` connections open as it may (`STREAMS_PER_ACCOUNT`, 5 by default), across every gateway. Close one, or wait: a stream's slot is freed when it closes, and within 30 s when a gateway dies. Resume with `Last-Event-ID` loses nothing.",
  },
  headers_too_large: {
    status: 431,
    title: 'Request headers too large',
    help: 'The request line and headers together exceed 16 KiB. Send shorter URLs and fewer or smaller headers.',
  },
  internal_error: {
    status: 500,
    title: 'Internal server error',
    help: 'Something failed on our side. The request may be retried; quote `request_id` when reporting it.',
  },
  service_unavailable: {
    status: 503,
    title: 'Service unavailable',
    help: 'A service behind the gateway is not running or the message broker is unreachable. Retry after the seconds `Retry-After` gives; a POST with the same Idempotency-Key is applied at most once.',
    retryAfterSeconds: 2,
  },
  database_unavailable: {
    status: 503,
    title: 'Database unavailable',
    help: 'The database is unreachable or did not answer in time. Retry after the seconds `Retry-After` gives; a POST with the same Idempotency-Key is applied at most once.',
    retryAfterSeconds: 2,
  },
  overloaded: {
    status: 503,
    title: 'Server overloaded',
    help: 'The gateway has more requests in hand than it can answer in time and refused this one at once, without doing any of it. Retry after the seconds `Retry-After` gives, with backoff.',
    retryAfterSeconds: 1,
  },
  upstream_timeout: {
    status: 504,
    title: 'Upstream timeout',
    help: 'No answer could be given in time (a service, the broker or the database did not answer). The request may or may not have been applied: retry it after `Retry-After` with the same Idempotency-Key to be safe.',
    retryAfterSeconds: 2,
  },
} as const satisfies Record<
  string,
  { status: number; title: string; help: string; retryAfterSeconds?: number }
>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Seconds a client should wait before retrying after `code`: every 503 and 504 says (`Retry-After`). */
export function retryAfterSeconds(code: ErrorCode): number | undefined {
  const entry: { status: number; retryAfterSeconds?: number } = ERROR_CATALOGUE[code];
  return entry.retryAfterSeconds;
}

export interface FieldError {
  field: string;
  message: string;
}
