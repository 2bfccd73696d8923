/**
 * The headers of the hooks that answer before or around any handler, as the document shows them
 * on each response: request id, rate limits, authentication, retry hints, idempotent replays.
 */

const integerHeader = (description: string, example: number) => ({
  description,
  schema: { type: 'integer', examples: [example] },
});

const REQUEST_ID = {
  required: true,
  description:
    "The request's id: the client's own `X-Request-Id` when well formed (1-128 of `A-Za-z0-9._:-`), else a new UUID. Also `request_id` in problem details and in every log line of the request.",
  schema: { type: 'string', examples: ['8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10'] },
};

/** On every response to an authenticated request the limiter counted (not while Redis is down and failing open). */
const RATE_LIMIT = {
  'RateLimit-Policy': {
    description: "The plan's quota `q` per window of `w` seconds.",
    schema: { type: 'string', examples: ['"hourly";q=1000;w=3600'] },
  },
  RateLimit: {
    description:
      'Requests remaining `r`, and seconds `t` until the oldest counted request leaves the window.',
    schema: { type: 'string', examples: ['"hourly";r=998;t=3540'] },
  },
  'X-RateLimit-Limit': integerHeader('Requests per window on this plan.', 1000),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.', 998),
  'X-RateLimit-Reset': integerHeader(
    'Unix time (seconds) when the oldest counted request leaves the window.',
    1774000000,
  ),
};

const RETRY_AFTER = {
  ...integerHeader('Seconds to wait before retrying (on 429, 503 and 504).', 42),
  required: true,
};
const WWW_AUTHENTICATE = {
  required: true,
  description:
    'The authentication challenge (RFC 6750): `error="invalid_token"` on 401; on 403 `error="insufficient_scope"` with the `scope` the operation needs.',
  schema: {
    type: 'string',
    examples: [
      'Bearer realm="api", error="invalid_token"',
      'Bearer error="insufficient_scope", scope="conversations:write"',
    ],
  },
};
const IDEMPOTENT_REPLAYED = {
  description: 'Present when this is the stored first response to the same `Idempotency-Key`, path and body.',
  schema: { type: 'string', enum: ['true'] },
};

/** Every header a response may carry, once, as the document's `components.headers`. */
export const HEADER_COMPONENTS = {
  'X-Request-Id': REQUEST_ID,
  ...RATE_LIMIT,
  'Retry-After': RETRY_AFTER,
  'WWW-Authenticate': WWW_AUTHENTICATE,
  'Idempotent-Replayed': IDEMPOTENT_REPLAYED,
};

type HeaderName = keyof typeof HEADER_COMPONENTS;
const ref = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The headers of a response, by reference: which depends on the status and method. */
export function responseHeaders(method: string, status: number): Record<string, unknown> {
  return {
    ...ref('X-Request-Id'),
    ...(status !== 401 && ref(...(Object.keys(RATE_LIMIT) as HeaderName[]))),
    ...((status === 401 || status === 403) && ref('WWW-Authenticate')),
    ...((status === 429 || status === 503 || status === 504) && ref('Retry-After')),
    ...(method === 'POST' && status < 300 && ref('Idempotent-Replayed')),
  };
}
