import amqp, { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Logger } from 'pino';

/**
 * A self-healing AMQP connection. Nagle's algorithm is switched off: amqplib leaves it on, which
 * triples request/reply p99 (DESIGN.md, Performance).
 */
export function connectAmqp(url: string, name: string, logger: Logger): AmqpConnectionManager {
  const connection = amqp.connect([url], {
    heartbeatIntervalInSeconds: 5,
    reconnectTimeInSeconds: 1,
    connectionOptions: { noDelay: true, clientProperties: { connection_name: name } },
  });
  connection.on('connect', () => logger.info({ broker: redact(url) }, 'amqp connected'));
  connection.on('disconnect', ({ err }) => logger.warn({ err: err?.message }, 'amqp disconnected'));
  connection.on('connectFailed', ({ err }) => logger.warn({ err: err?.message }, 'amqp connection failed'));
  return connection;
}

/** The URL without its password, for logs. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '[invalid url]';
  }
}
