import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '@app/errors';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { sendProblem } from './problem.filter';

/**
 * Fastify rejects some URLs before any hook runs: a path segment longer than maxParamLength, or
 * one that is not valid percent-encoding. Such a segment can only be a malformed id, so it is the
 * same 404 as any other malformed id, after the same authentication check.
 */
export function frameworkErrorHandler(authenticator: () => ApiKeyAuthenticator | undefined) {
  return (_error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    const respond = async () => {
      const auth = authenticator();
      if (auth && request.url.startsWith('/v1')) await auth.authenticate(request.headers.authorization);
      throw new DomainError('not_found', 'Nothing exists at this path: its id is malformed.');
    };
    respond().catch((error: unknown) => {
      const problem =
        error instanceof DomainError
          ? error
          : new DomainError('internal_error', 'An unexpected error occurred.');
      sendProblem(request, reply, problem);
    });
  };
}
