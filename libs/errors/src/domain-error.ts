import { ERROR_CATALOGUE, ErrorCode, FieldError } from './error-codes';

/** Validation errors list at most 20 entries, and `detail` counts the rest (docs/errors.md). */
export const MAX_FIELD_ERRORS = 20;

/** Serialisable form of a {@link DomainError}: what crosses RabbitMQ inside an RPC reply. */
export interface ErrorPayload {
  code: ErrorCode;
  detail: string;
  errors?: FieldError[];
}

/**
 * A failure the client caused or must know about. Services throw it; the gateway renders it.
 * Anything that is not a DomainError is an internal error and is never shown to the client.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = 'DomainError';
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }

  toPayload(): ErrorPayload {
    return this.errors
      ? { code: this.code, detail: this.detail, errors: this.errors }
      : { code: this.code, detail: this.detail };
  }

  static fromPayload(payload: ErrorPayload): DomainError {
    const code = payload.code in ERROR_CATALOGUE ? payload.code : 'internal_error';
    return new DomainError(code, payload.detail, payload.errors);
  }

  /** A 400 listing what is wrong: at most {@link MAX_FIELD_ERRORS} entries, the detail counting the rest. */
  static validation(errors: FieldError[]): DomainError {
    const listed = errors.slice(0, MAX_FIELD_ERRORS);
    const omitted = errors.length - listed.length;
    const detail = listed.map((e) => `${e.field}: ${e.message}`).join('; ');
    return new DomainError(
      'validation_failed',
      omitted > 0 ? `${detail}; and ${omitted} more` : detail,
      listed,
    );
  }
}

/** The 503 of a gateway past its capacity (load shedding, and a rate-limit check it read too late). */
export const overloaded = (): DomainError =>
  new DomainError('overloaded', 'The server is over capacity; retry after the time in Retry-After.');
