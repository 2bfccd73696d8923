import { Writable } from 'node:stream';
import pino, { Logger } from 'pino';

/** A real pino logger whose JSON lines a test can read back (`lines`), at `level` and above. */
export function capturedLogger(level = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: pino({ level }, sink), lines };
}
