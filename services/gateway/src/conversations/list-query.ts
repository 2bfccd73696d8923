import { isSnapshotToken, ListConversationsQuery } from '@app/contracts';
import { ALL_STATUS_SPELLINGS, LIST_QUERY_ALIASES, ListQueryParam, parseStatus } from '@app/dialects';
import { DomainError, FieldError } from '@app/errors';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;
const MAX_OFFSET = 1_000_000_000;

type RawQuery = Record<string, string | string[] | undefined>;

/**
 * Reads the list parameters in any dialect. Two spellings of one parameter must agree
 * (`limit=5&had=10` is a 400, `status=active&stan=aktywne` is not). Unknown parameters are ignored.
 */
export function parseListQuery(raw: RawQuery): ListConversationsQuery {
  const errors: FieldError[] = [];
  const value = (param: ListQueryParam) => pickOne(raw, param, errors);

  const limit = parseInteger(value('limit'), 'limit', DEFAULT_PAGE_SIZE, 1, MAX_PAGE_SIZE, errors);
  const offset = parseInteger(value('offset'), 'offset', 0, 0, MAX_OFFSET, errors);
  const statusText = value('status');
  const status = statusText === undefined ? undefined : parseStatus(statusText);
  if (statusText !== undefined && !status) {
    errors.push({ field: 'status', message: `must be one of: ${ALL_STATUS_SPELLINGS.join(', ')}` });
  }
  // Sealed by the conversations service, which opens it; only its shape is checked here.
  const snapshot = single(raw.snapshot, 'snapshot', errors);
  if (snapshot !== undefined && !isSnapshotToken(snapshot)) {
    errors.push({
      field: 'snapshot',
      message: 'must be a pagination.snapshot token returned by an earlier page',
    });
  }
  if (errors.length > 0) throw DomainError.validation(errors);
  return { limit, offset, ...(status && { status }), ...(snapshot && { snapshot }) };
}

/** The one value given for a parameter across its spellings, or a conflict error. */
function pickOne(raw: RawQuery, param: ListQueryParam, errors: FieldError[]): string | undefined {
  const given: Array<{ name: string; value: string }> = [];
  for (const name of LIST_QUERY_ALIASES[param]) {
    const value = single(raw[name], name, errors);
    if (value !== undefined) given.push({ name, value });
  }
  if (given.length === 0) return undefined;
  // Spellings agree when they mean the same: `aktif` = `active`, `05` = `5`.
  const canonical = (text: string) =>
    param === 'status' ? (parseStatus(text) ?? text) : /^\s*\d+\s*$/.test(text) ? String(Number(text)) : text;
  if (new Set(given.map((entry) => canonical(entry.value))).size > 1) {
    errors.push({
      field: param,
      message: `conflicting values for ${given.map((entry) => `${entry.name}=${entry.value}`).join(' and ')}`,
    });
    return undefined;
  }
  return given[0].value;
}

/** A parameter repeated with different values is ambiguous. */
export function single(
  value: string | string[] | undefined,
  name: string,
  errors: FieldError[],
): string | undefined {
  if (!Array.isArray(value)) return value;
  if (new Set(value).size === 1) return value[0];
  errors.push({ field: name, message: 'must be given once' });
  return undefined;
}

function parseInteger(
  text: string | undefined,
  field: string,
  fallback: number,
  min: number,
  max: number,
  errors: FieldError[],
): number {
  if (text === undefined) return fallback;
  const value = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    errors.push({ field, message: `must be an integer from ${min} to ${max}` });
  }
  return value;
}
