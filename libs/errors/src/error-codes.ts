/**
 * The one error vocabulary of the product. A code never changes once published; the same codes
 * cross RabbitMQ in RPC replies and are rendered as RFC 9457 problem details by the gateway.
 */
export const ERROR_CATALOGUE = {
  validation_failed: { status: 400, title: 'Request validation failed' },
  invalid_json: { status: 400, title: 'Malformed JSON body' },
  invalid_request: { status: 400, title: 'Malformed HTTP request' },
  unauthorized: { status: 401, title: 'Missing or invalid API key' },
  not_found: { status: 404, title: 'Resource not found' },
  route_not_found: { status: 404, title: 'No such endpoint' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request not received in time' },
  conversation_closed: { status: 409, title: 'Conversation is closed' },
  invalid_transition: { status: 409, title: 'Status transition not allowed' },
  idempotency_key_in_use: { status: 409, title: 'Idempotency key in use' },
  webhook_disabled: { status: 409, title: 'Webhook is disabled' },
  delivery_pending: { status: 409, title: 'Delivery is still pending' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  idempotency_key_reused: { status: 422, title: 'Idempotency key reused' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  internal_error: { status: 500, title: 'Internal server error' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface FieldError {
  field: string;
  message: string;
}
