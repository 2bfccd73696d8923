import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { ERROR_CATALOGUE, ErrorCode, PROBLEM_CONTENT_TYPE } from '@app/errors';
import { ProblemResponse } from '../conversations/dto/conversation-responses.dto';

/** Documents the problem-details responses an endpoint can give, grouped by status. */
export function ApiProblems(...codes: ErrorCode[]): MethodDecorator {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'unauthorized', 'rate_limited', 'internal_error', 'service_unavailable', 'upstream_timeout'] as ErrorCode[]) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return applyDecorators(
    ...[...byStatus].map(([status, statusCodes]) =>
      ApiResponse({
        status,
        description: `Problem details; code ${statusCodes.map((c) => `\`${c}\``).join(' or ')}.`,
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/ProblemResponse' } } },
      }),
    ),
  );
}

export const PROBLEM_SCHEMAS = [ProblemResponse];
