import type { ApiResponse } from './api-client';

/** The problem-details contract as clients see it (docs/errors.md). */
export const PROBLEM_BASE = '/problems/';

export const PROBLEM_TITLES: Record<string, string> = {
  validation_failed: 'Request validation failed',
  invalid_json: 'Malformed JSON body',
  headers_too_large: 'Request headers too large',
  unauthorized: 'Missing or invalid API key',
  not_found: 'Resource not found',
  route_not_found: 'No such endpoint',
  conversation_closed: 'Conversation is closed',
  invalid_transition: 'Status transition not allowed',
  idempotency_key_in_use: 'Idempotency key in use',
  webhook_disabled: 'Webhook is disabled',
  delivery_pending: 'Delivery is still pending',
  payload_too_large: 'Request body too large',
  unsupported_media_type: 'Unsupported media type',
  idempotency_key_reused: 'Idempotency key reused',
  replay_too_large: 'Replay window too large',
  rate_limited: 'Rate limit exceeded',
  service_unavailable: 'Service unavailable',
  database_unavailable: 'Database unavailable',
  overloaded: 'Server overloaded',
  upstream_timeout: 'Upstream timeout',
};

/**
 * The exact RFC 9457 document for an error other than a validation failure: every field, nothing
 * else. `path` is the request's (its `instance`, as the server saw it, percent-encoded); without
 * it any instance is accepted. `detail`, when given, is the exact detail expected.
 */
export function expectProblem(
  res: ApiResponse,
  status: number,
  code: string,
  path?: string,
  detail?: string,
): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  const requestId = res.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(res.body).toEqual({
    type: PROBLEM_BASE + code.replace(/_/g, '-'),
    title: PROBLEM_TITLES[code],
    status,
    detail: detail ?? expect.stringMatching(/./),
    code,
    request_id: requestId,
    instance: path === undefined ? expect.any(String) : new URL(path, 'http://x').pathname,
    ...(code === 'validation_failed' && { errors: expect.any(Array) }),
  });
}

/** A 400 validation_failed whose `errors` name exactly the given fields, each with a message. */
export function expectValidation(res: ApiResponse, path: string, fields: string[]): void {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status: 400, code: 'validation_failed' });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  expect(res.body).toEqual({
    type: `${PROBLEM_BASE}validation-failed`,
    title: PROBLEM_TITLES.validation_failed,
    status: 400,
    detail: expect.any(String),
    code: 'validation_failed',
    request_id: res.headers.get('x-request-id'),
    instance: new URL(path, 'http://x').pathname,
    errors: expect.any(Array),
  });
  const errors = res.body.errors as Array<{ field: string; message: string }>;
  for (const error of errors)
    expect(error).toEqual({ field: expect.any(String), message: expect.any(String) });
  expect([...new Set(errors.map((e) => e.field))].sort()).toEqual([...new Set(fields)].sort());
}
