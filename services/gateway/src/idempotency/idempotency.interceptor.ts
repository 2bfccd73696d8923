import { CallHandler, ExecutionContext, HttpStatus, Injectable, NestInterceptor } from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';
import { isStorableText } from '@app/contracts';
import { DomainError } from '@app/errors';
import { problemFor } from '../http/problem.filter';
import { commandIdFor, hashBody } from './canonical-json';
import { IdempotencyRepository, StoredIdempotencyKey } from './idempotency.repository';
import { ReplayedResponse } from './replayed-response';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/**
 * `Idempotency-Key` on POST (DESIGN.md): the first response for a key is stored and replayed for
 * the same path and body; another path or body is 422; a duplicate racing the first is 409.
 * 5xx outcomes release the key so the client can retry; the retry carries the same command id,
 * so the conversations service still applies the command once if the first attempt got through.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly keys: IdempotencyRepository,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.principal) return next.handle();
    const successStatus =
      this.reflector.get<number>(HTTP_CODE_METADATA, context.getHandler()) ?? HttpStatus.CREATED;
    return from(this.handle(request, successStatus, header, next));
  }

  private async handle(
    request: FastifyRequest,
    successStatus: number,
    header: string | string[],
    next: CallHandler,
  ) {
    const key = Array.isArray(header) ? header[0] : header;
    if (Array.isArray(header) || !KEY_PATTERN.test(key)) {
      throw DomainError.validation([
        { field: 'Idempotency-Key', message: 'must be one value of 1 to 255 printable ASCII characters' },
      ]);
    }
    const { accountId } = request.principal!;
    const path = decodePath(request.url);
    const fingerprint = { method: request.method, path, bodyHash: hashBody(request.body) };
    const existing = await this.keys.claim(accountId, key, fingerprint);
    if (existing) throw replayOrConflict(existing, fingerprint);

    request.commandId = commandIdFor(accountId, key);
    try {
      const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
      await this.keys.complete(accountId, key, successStatus, JSON.stringify(body) ?? '');
      return body;
    } catch (error) {
      if (error instanceof DomainError && error.status < 500) {
        // Exactly what the problem filter sends for this error.
        await this.keys.complete(accountId, key, error.status, JSON.stringify(problemFor(error, request)));
      } else {
        await this.keys.release(accountId, key);
      }
      throw error;
    }
  }
}

/** What an already-used key gives: its stored response, or why it cannot be replayed. */
function replayOrConflict(
  existing: StoredIdempotencyKey,
  fingerprint: { method: string; path: string; bodyHash: string },
): Error {
  if (
    existing.method !== fingerprint.method ||
    existing.path !== fingerprint.path ||
    existing.bodyHash !== fingerprint.bodyHash
  ) {
    return new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with a different path or body; use a new key for a new request.',
    );
  }
  if (existing.statusCode === null) {
    return new DomainError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still in progress; retry shortly.',
    );
  }
  return new ReplayedResponse(existing.statusCode, existing.responseBody);
}

function decodePath(url: string): string {
  const path = url.split('?')[0];
  try {
    const decoded = decodeURIComponent(path);
    // A NUL or lone surrogate cannot be stored in Postgres text: such a path is kept as sent.
    return isStorableText(decoded) ? decoded : path;
  } catch {
    return path;
  }
}
