import pino, { Logger } from 'pino';
import { requestContext } from './request-context';

/**
 * JSON logs on stderr (stdout stays free for CLI output). The request context, when there is one,
 * is mixed into every line so one request can be followed across services.
 */
export function createLogger(service: string, level: string): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => ({ ...requestContext.getStore() }),
      redact: { paths: ['req.headers.authorization', 'authorization', 'apiKey', 'secret'], censor: '[redacted]' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}
