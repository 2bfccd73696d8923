import { Type, type Static } from '@sinclair/typebox';
import { DomainError } from './domain-error';
import { ERROR_CATALOGUE, type ErrorCode } from './error-codes';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
/**
 * Problem types are pages the gateway serves (`/problems/validation-failed`), given as references
 * relative to the API's own address (RFC 9457 3.1.1), so they resolve wherever it is deployed.
 */
export const PROBLEM_TYPE_BASE = '/problems/';

/** The page of a code: `validation_failed` -> `/problems/validation-failed`. */
export const problemType = (code: ErrorCode) => PROBLEM_TYPE_BASE + code.replace(/_/g, '-');

/** RFC 9457 problem details with the product's `code` and `request_id` extensions. */
export const ProblemDetailsSchema = Type.Object(
  {
    type: Type.String({
      format: 'uri-reference',
      description: 'A page saying what the code means and what to do, relative to the API address.',
      examples: [`${PROBLEM_TYPE_BASE}validation-failed`],
    }),
    title: Type.String({ examples: ['Request validation failed'] }),
    status: Type.Integer({ minimum: 400, maximum: 599, examples: [400] }),
    detail: Type.String({ examples: ['content: must be 1 to 10000 characters long'] }),
    code: Type.Unsafe<keyof typeof ERROR_CATALOGUE>({
      type: 'string',
      enum: Object.keys(ERROR_CATALOGUE),
      description: 'Stable snake_case error code.',
      examples: ['validation_failed'],
    }),
    request_id: Type.String({ examples: ['8f14e45f-ceea-467f-a0b6-3c6c9c2b7f10'] }),
    instance: Type.Optional(
      Type.String({ description: 'The request path.', examples: ['/v1/conversations'] }),
    ),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          {
            field: Type.String({ examples: ['content'] }),
            message: Type.String({ examples: ['must be 1 to 10000 characters long'] }),
          },
          { additionalProperties: false },
        ),
        { maxItems: 20, description: 'What is wrong, by field (at most 20; `detail` counts the rest).' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ProblemDetails = Static<typeof ProblemDetailsSchema>;

export function toProblem(error: DomainError, requestId: string, instance?: string): ProblemDetails {
  const entry = ERROR_CATALOGUE[error.code];
  const problem: ProblemDetails = {
    type: problemType(error.code),
    title: entry.title,
    status: entry.status,
    detail: error.detail,
    code: error.code,
    request_id: requestId,
  };
  if (instance) problem.instance = instance;
  if (error.errors) problem.errors = error.errors;
  return problem;
}
