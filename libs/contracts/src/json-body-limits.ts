import type { FieldError } from '@app/errors';

/**
 * Any JSON body nests at most 32 levels (docs/api-conventions.md, "Hostile input"); and it holds at most 10,000
 * elements (array items and object members), more than any valid body can (metadata's 16 KiB
 * holds at most about 8,200), so that no body makes parsing or validation slow.
 */
export const JSON_BODY_LIMITS = { depth: 32, elements: 10_000 } as const;

/** What each byte means to the scan, looked up rather than compared (a hot loop over up to 1 MiB). */
const OTHER = 0;
const QUOTE = 1;
const BACKSLASH = 2;
const COMMA = 3;
const OPEN = 4;
const CLOSE = 5;
const SPACE = 6;
const CLASS = new Uint8Array(256);
CLASS[0x22] = QUOTE;
CLASS[0x5c] = BACKSLASH;
CLASS[0x2c] = COMMA;
CLASS[0x5b] = CLASS[0x7b] = OPEN; // [ {
CLASS[0x5d] = CLASS[0x7d] = CLOSE; // ] }
CLASS[0x20] = CLASS[0x09] = CLASS[0x0a] = CLASS[0x0d] = SPACE;

/**
 * Checks the limits on the raw bytes, before they are parsed: one pass, no allocation, no
 * recursion, so a refused body costs about a millisecond per megabyte. Text that is not JSON may
 * pass or fail here; the parser that follows refuses it either way.
 */
export function jsonBodyLimitError(bytes: Uint8Array): FieldError | undefined {
  let depth = 0;
  let elements = 0;
  let inString = false;
  let escaped = false;
  let justOpened = false;
  for (let i = 0; i < bytes.length; i++) {
    const kind = CLASS[bytes[i]];
    if (inString) {
      if (escaped) escaped = false;
      else if (kind === BACKSLASH) escaped = true;
      else if (kind === QUOTE) inString = false;
      continue;
    }
    if (kind === OTHER || kind === SPACE) {
      if (justOpened && kind === OTHER) {
        justOpened = false;
        elements++; // the first element of a non-empty container
      }
      continue;
    }
    if (justOpened && kind !== CLOSE) elements++;
    justOpened = false;
    if (kind === QUOTE) inString = true;
    else if (kind === COMMA) elements++;
    else if (kind === CLOSE) depth--;
    else if (kind === OPEN) {
      justOpened = true;
      if (++depth > JSON_BODY_LIMITS.depth) {
        return { field: 'body', message: `must be nested at most ${JSON_BODY_LIMITS.depth} levels deep` };
      }
    }
    if (elements > JSON_BODY_LIMITS.elements) {
      return {
        field: 'body',
        message: `must hold at most ${JSON_BODY_LIMITS.elements} array items and object members`,
      };
    }
  }
  return undefined;
}
