import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import {
  DomainError,
  ERROR_CATALOGUE,
  ErrorCode,
  FieldError,
  PROBLEM_CONTENT_TYPE,
  toProblem,
} from '@app/errors';
import { ProblemResponse } from '../conversations/dto/conversation-responses.dto';

/** Every operation can answer these, whatever it does. */
const ALWAYS: ErrorCode[] = [
  'unauthorized',
  'rate_limited',
  'internal_error',
  'service_unavailable',
  'upstream_timeout',
];

/** A typical detail per code, for the document's examples (the real ones name the request's specifics). */
const EXAMPLE_DETAILS: Record<ErrorCode, string> = {
  validation_failed: 'limit: must be an integer from 1 to 100',
  invalid_json: 'The request body is not valid JSON.',
  invalid_request: 'The request could not be parsed.',
  unauthorized: 'The API key is not valid.',
  not_found: 'Conversation 0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b was not found.',
  route_not_found: 'No endpoint GET /v1/nothing.',
  method_not_allowed: 'PUT is not allowed here.',
  request_timeout: 'The request was not received in time.',
  conversation_closed: 'The conversation is closed; reopen it (PATCH status active) to send messages.',
  invalid_transition: 'A closed conversation can only be reopened (status active).',
  idempotency_key_in_use: 'A request with this Idempotency-Key is still being processed; retry later.',
  webhook_disabled: 'The webhook is disabled; enable it first.',
  delivery_pending: 'The delivery is still being attempted; retry it once it has succeeded or failed.',
  payload_too_large: 'The request body is larger than the limit (1 MiB by default).',
  unsupported_media_type: 'Request bodies must be JSON with Content-Type: application/json.',
  idempotency_key_reused: 'This Idempotency-Key was used with another path or body.',
  rate_limited: "This account's plan allows 1000 requests per window; retry after 42 s.",
  headers_too_large: 'A request header is larger than 16 KiB.',
  internal_error: 'An unexpected error occurred. Quote the request_id when reporting it.',
  service_unavailable: 'The conversations service is not running.',
  upstream_timeout: 'No reply from the service within 5000 ms.',
};
const EXAMPLE_FIELD_ERRORS: FieldError[] = [{ field: 'limit', message: 'must be an integer from 1 to 100' }];

function example(code: ErrorCode) {
  const error = new DomainError(
    code,
    EXAMPLE_DETAILS[code],
    code === 'validation_failed' ? EXAMPLE_FIELD_ERRORS : undefined,
  );
  return {
    summary: code,
    value: toProblem(error, '8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10', '/v1/conversations'),
  };
}

/**
 * Documents the problem-details responses an endpoint can give, grouped by status, with one
 * example per code (named by the code): the codes a status may carry are exactly its examples.
 */
export function ApiProblems(...codes: ErrorCode[]): MethodDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, ...ALWAYS]) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return applyDecorators(
    ...[...byStatus].map(([status, statusCodes]) =>
      ApiResponse({
        status,
        description: `Problem details; code ${statusCodes.map((c) => `\`${c}\``).join(' or ')}.`,
        content: {
          [PROBLEM_CONTENT_TYPE]: {
            schema: { $ref: '#/components/schemas/ProblemResponse' },
            examples: Object.fromEntries(statusCodes.map((code) => [code, example(code)])),
          },
        },
      }),
    ),
  );
}

export const PROBLEM_SCHEMAS = [ProblemResponse];
