/**
 * The one error vocabulary of the product. A code never changes once published; the same codes
 * cross RabbitMQ in RPC replies and are rendered as RFC 9457 problem details by the gateway.
 * `retryAfterSeconds`: what the `Retry-After` header of a 503 or 504 says (every one carries it).
 */
export const ERROR_CATALOGUE = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  invalid_json: { status: 400, title: 'Malformed JSON body' },
  unauthorized: { status: 401, title: 'Missing or invalid API key' },
  not_found: { status: 404, title: 'Resource not found' },
  route_not_found: { status: 404, title: 'No such endpoint' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  conversation_closed: { status: 409, title: 'Conversation is closed' },
  invalid_transition: { status: 409, title: 'Status transition not allowed' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  webhook_disabled: { status: 409, title: 'Webhook is disabled' },
  delivery_pending: { status: 409, title: 'Delivery is still pending' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable', retryAfterSeconds: 2 },
  database_unavailable: { status: 503, title: 'Database unavailable', retryAfterSeconds: 2 },
  overloaded: { status: 503, title: 'Server overloaded', retryAfterSeconds: 1 },
  upstream_timeout: { status: 504, title: 'Upstream timeout', retryAfterSeconds: 2 },
} as const satisfies Record<string, { status: number; title: string; retryAfterSeconds?: number }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Seconds a client should wait before retrying after `code`, for the codes that say (503, 504). */
export function retryAfterSeconds(code: ErrorCode): number | undefined {
  const entry: { status: number; retryAfterSeconds?: number } = ERROR_CATALOGUE[code];
  return entry.retryAfterSeconds;
}

export interface FieldError {
  field: string;
  message: string;
}
