import type { FieldError } from '@app/errors';
import { shortened } from './schema-validation';

/**
 * The object keys a JSON body may not hold (docs/api-conventions.md, "JSON bodies"): a key given
 * twice in one object (parsers disagree on which one wins, so a security-relevant field could be
 * read one way here and another way by a proxy or a client), and the keys that change an
 * object's prototype in JavaScript (`__proto__`, and `prototype` inside `constructor`), which a
 * client that merges the value into its own objects would be polluted by.
 */
export const RESERVED_KEY_MESSAGE =
  'is a reserved key (it would change the prototype of JavaScript objects); use another name';
export const DUPLICATE_KEY_MESSAGE = 'is given more than once in the same object';

type Frame = { keys: Set<string> | undefined; key: string; index: number };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The first duplicate or reserved key in `text`, which must be valid JSON (parse it first), by
 * its path (`metadata.a.b`). One pass; it allocates only the keys' strings.
 */
export function jsonKeyError(text: string): FieldError | undefined {
  const frames: Frame[] = [];
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      const end = stringEnd(text, i);
      if (expectingKey) {
        const frame = frames[frames.length - 1];
        const raw = text.slice(i + 1, end);
        frame.key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        const message = keyMessage(frames, frame.key);
        if (message) return { field: pathOf(frames), message };
        frame.keys!.add(frame.key);
        expectingKey = false;
      }
      i = end;
    } else if (code === 0x7b /* { */) {
      frames.push({ keys: new Set(), key: '', index: 0 });
      expectingKey = true;
    } else if (code === 0x5b /* [ */) {
      frames.push({ keys: undefined, key: '', index: 0 });
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      frames.pop();
    } else if (code === 0x2c /* , */) {
      const frame = frames[frames.length - 1];
      if (frame.keys) expectingKey = true;
      else frame.index++;
    }
  }
  return undefined;
}

function keyMessage(frames: Frame[], key: string): string | undefined {
  const frame = frames[frames.length - 1];
  if (frame.keys!.has(key)) return DUPLICATE_KEY_MESSAGE;
  if (key === '__proto__') return RESERVED_KEY_MESSAGE;
  const parent = frames[frames.length - 2];
  if (key === 'prototype' && parent?.keys && parent.key === 'constructor') return RESERVED_KEY_MESSAGE;
  return undefined;
}

/** The index of the quote that closes the string opened at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  while (isEscaped(text, end)) end = text.indexOf('"', end + 1);
  return end;
}

function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

function pathOf(frames: Frame[]): string {
  return frames.map((frame) => (frame.keys ? shortened(frame.key) : String(frame.index))).join('.');
}
