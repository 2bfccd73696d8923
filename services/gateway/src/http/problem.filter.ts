import { ArgumentsHost, Catch, ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { DomainError, ErrorCode, PROBLEM_CONTENT_TYPE, retryAfterSeconds, toProblem } from '@app/errors';

/**
 * Errors raised by Fastify while reading the body reach the filter as HttpExceptions carrying only
 * a status and Fastify's message; these are their client-facing codes and details.
 */
const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  404: 'route_not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/** Renders every error as RFC 9457 problem details; nothing else ever reaches a client. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const request = host.switchToHttp().getRequest<FastifyRequest>();
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const error = this.toDomainError(exception, request);
    // Answered already (the request deadline's 408 or 504): the late failure changes nothing.
    if (!reply.sent) sendProblem(request, reply, error);
  }

  private toDomainError(exception: unknown, request: FastifyRequest): DomainError {
    if (exception instanceof DomainError) return exception;
    // The request's own stream failed while its body was read: the client left, broke its
    // chunking (answered by the HTTP parser's handler) or was cut off. Its doing, not an error here.
    if (exception !== undefined && exception === request.raw.errored) {
      return new DomainError('invalid_request', 'The request body was not received completely.');
    }
    if (exception instanceof HttpException && HTTP_STATUS_CODES[exception.getStatus()]) {
      return fromHttpException(exception, request);
    }
    this.logger.error({ err: exception, request_id: request.id }, 'unhandled error');
    return new DomainError(
      'internal_error',
      'An unexpected error occurred. Quote the request_id when reporting it.',
    );
  }
}

function fromHttpException(exception: HttpException, request: FastifyRequest): DomainError {
  const code = HTTP_STATUS_CODES[exception.getStatus()];
  switch (code) {
    case 'route_not_found':
      return new DomainError(
        code,
        `No endpoint ${request.method} ${request.url.split('?')[0].slice(0, 200)}.`,
      );
    case 'payload_too_large':
      return new DomainError(code, 'The request body is larger than the limit (1 MiB by default).');
    case 'unsupported_media_type':
      return new DomainError(code, 'Request bodies must be JSON with Content-Type: application/json.');
    case 'validation_failed':
      return /json|body cannot be empty/i.test(exception.message)
        ? new DomainError('invalid_json', 'The request body is not valid JSON.')
        : new DomainError(code, exception.message);
    default:
      return new DomainError(code, exception.message);
  }
}

export function problemFor(error: DomainError, request: FastifyRequest) {
  return toProblem(error, request.id, request.url.split('?')[0]);
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: DomainError): FastifyReply {
  if (error.code === 'unauthorized')
    reply.header('www-authenticate', 'Bearer realm="api", error="invalid_token"');
  // Every 503 and 504 says when to retry (a 429 sets its own).
  const retryAfter = retryAfterSeconds(error.code);
  if (retryAfter !== undefined && !reply.hasHeader('retry-after'))
    reply.header('retry-after', String(retryAfter));
  return reply
    .header('x-request-id', request.id)
    .status(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemFor(error, request));
}
