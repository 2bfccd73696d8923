import pino, { Logger } from 'pino';

/**
 * Fields that must never reach a log line, at the top level or one object down: credentials
 * (API keys, webhook secrets), message content and visitors' contact details. Log lines name ids
 * and outcomes; a field added by mistake is still censored here.
 */
const SECRET_FIELDS = ['authorization', 'apiKey', 'secret', 'previous_secret', 'content', 'email', 'phone'];
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'visitor.name',
  'lead.name',
  // TypeORM's QueryFailedError carries the statement's parameters (message content among them).
  'err.parameters',
  ...SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]),
];

/**
 * JSON logs on stderr (stdout stays free for CLI output). Lines written for a request name its
 * `request_id` and `account_id` themselves, so one request can be followed across services (no
 * AsyncLocalStorage: its promise hooks cost every promise of the process, request or not).
 */
export function createLogger(service: string, level: string): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      // "level":"error", not pino's number: what people grep for and log pipelines expect.
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    pino.destination({ dest: 2, sync: false }),
  );
}
