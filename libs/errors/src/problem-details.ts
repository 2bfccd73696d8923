import { DomainError } from './domain-error';
import { ERROR_CATALOGUE, ErrorCode, FieldError } from './error-codes';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PROBLEM_TYPE_BASE = 'https://docs.conversations.example/problems/';

/** RFC 9457 problem details with the product's `code` and `request_id` extensions. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  request_id: string;
  instance?: string;
  errors?: FieldError[];
}

export function toProblem(error: DomainError, requestId: string, instance?: string): ProblemDetails {
  const entry = ERROR_CATALOGUE[error.code];
  const problem: ProblemDetails = {
    type: PROBLEM_TYPE_BASE + error.code.replace(/_/g, '-'),
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
