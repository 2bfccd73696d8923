import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { RpcCallContext } from '@app/contracts';
import { Dialect, negotiateDialect } from '@app/dialects';
import type { Principal } from '../auth/api-key-authenticator';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every /v1 request that reaches a handler. */
    principal?: Principal;
    /** Set by the idempotency hooks: the same for every retry of one logical command. */
    commandId?: string;
  }
}

/** What a handler needs to forward a request: who asks, the request id, the command id, its trace context. */
export type CallContext = RpcCallContext;

export const Call = createParamDecorator((_: unknown, context: ExecutionContext): CallContext => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  if (!request.principal) throw new Error('route reached without authentication');
  return {
    accountId: request.principal.accountId,
    requestId: request.id,
    commandId: request.commandId,
    deadline: request.deadline,
    trace: request.trace,
  };
});

/** The dialect the response is rendered in (docs/dialects.md: Accept-Language, then path). */
export const OutputDialect = createParamDecorator((_: unknown, context: ExecutionContext): Dialect => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return negotiateDialect(request.headers['accept-language'], request.url);
});
