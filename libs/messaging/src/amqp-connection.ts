import amqp, { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/**
 * AMQP_URL names one broker or, comma-separated, the nodes of a cluster: the connection goes to
 * the first that answers and, when its node dies, reconnects to another (amqp-connection-manager
 * walks the list round-robin).
 */
export function brokerUrls(amqpUrl: string): string[] {
  return amqpUrl
    .split(',')
    .map((url) => url.trim())
    .filter(Boolean);
}

/**
 * A self-healing AMQP connection. Nagle's algorithm is switched off: amqplib leaves it on, which
 * triples request/reply p99 (DESIGN.md, Performance).
 */
export function connectAmqp(url: string, name: string, logger: Logger): AmqpConnectionManager {
  const connection = amqp.connect(brokerUrls(url), {
    heartbeatIntervalInSeconds: 5,
    reconnectTimeInSeconds: 1,
    connectionOptions: { noDelay: true, clientProperties: { connection_name: name } },
  });
  connection.on('connect', ({ connection: model, url: node }) => {
    coalesceWrites((model as unknown as { connection: { stream: Socket } }).connection.stream);
    // brokerUrls() hands the manager plain strings, so the node is one of them.
    logger.info({ broker: redact(typeof node === 'string' ? node : '(options)') }, 'amqp connected');
  });
  connection.on('disconnect', ({ err }) => logger.warn({ err: err?.message }, 'amqp disconnected'));
  connection.on('connectFailed', ({ err }) => logger.warn({ err: err?.message }, 'amqp connection failed'));
  logChannelErrors(connection, logger);
  return connection;
}

/**
 * A channel whose setup fails (the connection dropped half-way through declaring its queues, say)
 * emits 'error'; with nobody listening that would crash the process. Every channel of the
 * connection gets a listener: the failure is logged, and the manager sets the channel up again
 * when it reconnects.
 */
function logChannelErrors(connection: AmqpConnectionManager, logger: Logger): void {
  const createChannel = connection.createChannel.bind(connection);
  connection.createChannel = (options) => {
    const channel = createChannel(options);
    channel.on('error', (error: Error, { name }: { name?: string }) =>
      logger.warn({ err: error.message, channel: name }, 'amqp channel setup failed'),
    );
    return channel;
  };
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

/**
 * amqplib writes every frame to the socket separately, and with Nagle off each write is its own
 * system call. Corking the socket on the first write of a tick and uncorking on the next turns all
 * frames of that tick (replies, acks, publishes of many concurrent requests) into one writev.
 */
function coalesceWrites(socket: Socket): void {
  const write = socket.write.bind(socket);
  let corked = false;
  socket.write = function coalescedWrite(this: Socket, ...args: Parameters<Socket['write']>) {
    if (!corked) {
      corked = true;
      this.cork();
      process.nextTick(() => {
        corked = false;
        this.uncork();
      });
    }
    return write(...args);
  } as Socket['write'];
}
