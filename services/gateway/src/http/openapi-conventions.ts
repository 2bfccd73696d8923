import type { HeaderObject, OpenAPIObject, OperationObject, ParameterObject } from '@nestjs/swagger';
import { LIST_QUERY_ALIASES } from '@app/dialects';

/**
 * What every operation of the API shares, added to the document in one place rather than on each
 * handler: the output-dialect header, the Malay and Polish spellings of the list parameters, and
 * the response headers of the hooks that run before any handler (request id, rate limits,
 * authentication, idempotency replays).
 */

const ACCEPT_LANGUAGE: ParameterObject = {
  name: 'Accept-Language',
  in: 'header',
  required: false,
  description:
    'Output dialect of status values and event names: `en`, `ms` or `pl` (q-values honoured). Default: `pl` under `/v1/rozmowy`, else `en`.',
  schema: { type: 'string', example: 'ms' },
};

const integerHeader = (description: string, example: number): HeaderObject => ({
  description,
  schema: { type: 'integer', example },
});

const REQUEST_ID: HeaderObject = {
  required: true,
  description:
    "The request's id: the client's own `X-Request-Id` when well formed (1-128 of `A-Za-z0-9._:-`), else a new UUID. Also `request_id` in problem details and in every log line of the request.",
  schema: { type: 'string', example: '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10' },
};

/** On every response to an authenticated request the limiter counted (not while Redis is down and failing open). */
const RATE_LIMIT: Record<string, HeaderObject> = {
  'RateLimit-Policy': {
    description: "The plan's quota `q` per window of `w` seconds.",
    schema: { type: 'string', example: '"hourly";q=1000;w=3600' },
  },
  RateLimit: {
    description:
      'Requests remaining `r`, and seconds `t` until the oldest counted request leaves the window.',
    schema: { type: 'string', example: '"hourly";r=998;t=3540' },
  },
  'X-RateLimit-Limit': integerHeader('Requests per window on this plan.', 1000),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.', 998),
  'X-RateLimit-Reset': integerHeader(
    'Unix time (seconds) when the oldest counted request leaves the window.',
    1774000000,
  ),
};

const RETRY_AFTER: HeaderObject = {
  ...integerHeader('Seconds to wait before retrying (on 429, 503 and 504).', 42),
  required: true,
};
const WWW_AUTHENTICATE: HeaderObject = {
  required: true,
  description: 'The authentication scheme (RFC 6750).',
  schema: { type: 'string', example: 'Bearer realm="api", error="invalid_token"' },
};
const IDEMPOTENT_REPLAYED: HeaderObject = {
  description: 'Present when this is the stored first response to the same `Idempotency-Key`, path and body.',
  schema: { type: 'string', enum: ['true'] },
};

/** Each canonical list parameter, followed by its other spellings with the same schema. */
function withDialectAliases(parameters: OperationObject['parameters'] = []): OperationObject['parameters'] {
  return parameters.flatMap((parameter) => {
    if (!('in' in parameter) || parameter.in !== 'query' || !(parameter.name in LIST_QUERY_ALIASES))
      return [parameter];
    const spellings = LIST_QUERY_ALIASES[parameter.name as keyof typeof LIST_QUERY_ALIASES].slice(1);
    return [
      parameter,
      ...spellings.map((alias) => ({
        ...parameter,
        name: alias,
        description: `\`${parameter.name}\` in another dialect.`,
      })),
    ];
  });
}

function responseHeaders(method: string, status: string): Record<string, HeaderObject> {
  return {
    'X-Request-Id': REQUEST_ID,
    ...(status !== '401' && RATE_LIMIT),
    ...(status === '401' && { 'WWW-Authenticate': WWW_AUTHENTICATE }),
    ...(['429', '503', '504'].includes(status) && { 'Retry-After': RETRY_AFTER }),
    ...(method === 'post' && status.startsWith('2') && { 'Idempotent-Replayed': IDEMPOTENT_REPLAYED }),
  };
}

export function applyApiConventions(document: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v1/')) continue;
    for (const method of ['get', 'post', 'patch', 'put', 'delete'] as const) {
      const operation = item[method];
      if (!operation) continue;
      operation.parameters = [...(withDialectAliases(operation.parameters) ?? []), ACCEPT_LANGUAGE];
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response || 'headers' in response || '$ref' in response) continue;
        Object.assign(response, { headers: responseHeaders(method, status) });
      }
    }
  }
  return document;
}
