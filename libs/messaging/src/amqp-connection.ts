import amqp, { AmqpConnectionManager } from 'amqp-connection-manager';
import type { Socket } from 'node:net';
import type { Channel } from 'amqplib';
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
 * triples request/reply p99 (docs/architecture.md, "Request/reply over RabbitMQ").
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
  healChannels(connection, logger);
  return connection;
}

/** How long after the broker closed a channel on its own it is opened and set up again. */
const CHANNEL_REOPEN_MS = 1000;

/**
 * Every channel of the connection:
 * - a setup that fails (the connection dropped half-way through declaring its queues, say) emits
 *   'error'; with nobody listening that would crash the process. It is logged, and the channel is
 *   set up again on its next opening.
 * - a channel error (the broker closing one channel) is logged; with nobody listening, amqplib
 *   would turn it into the loss of the whole connection and of every other channel on it.
 * - amqp-connection-manager opens and sets a channel up again when the connection comes back, but
 *   not when the broker closes the channel alone (a channel error: binding a queue that was
 *   deleted, a failed precondition) while the connection stays up: the channel would stay dead
 *   (upstream issue jwalton/node-amqp-connection-manager#347). Such a channel is opened again
 *   here, CHANNEL_REOPEN_MS later, through the manager's own path (its `_onConnect`), unless the
 *   connection went down meanwhile (the manager reopens it then) or the channel was closed on purpose.
 */
function healChannels(connection: AmqpConnectionManager, logger: Logger): void {
  const createChannel = connection.createChannel.bind(connection);
  connection.createChannel = (options) => {
    const wrapper = createChannel(options);
    const name = options?.name;
    wrapper.on('error', (error: Error) =>
      logger.warn({ err: error.message, channel: name }, 'amqp channel setup failed'),
    );
    // Bumped by every (re)connection: a reopening planned before it is no longer needed.
    let opening = 0;
    let closedOnPurpose = false;
    const connected = () => opening++;
    connection.on('connect', connected);
    wrapper.once('close', () => {
      closedOnPurpose = true;
      connection.removeListener('connect', connected);
    });
    const reopenAfterClose = (channel: Channel) => {
      const planned = opening;
      // Unheard, a channel's 'error' takes the whole connection down (every channel with it).
      channel.on('error', (error: Error) =>
        logger.warn({ err: error.message, channel: name }, 'amqp channel error'),
      );
      channel.once('close', () => {
        setTimeout(() => {
          const current = connection.connection;
          if (closedOnPurpose || !current || planned !== opening) return;
          opening++;
          logger.warn({ channel: name }, 'amqp channel closed by the broker; opening it again');
          void (wrapper as unknown as Reopenable)._onConnect({ connection: current });
        }, CHANNEL_REOPEN_MS).unref();
      });
      return Promise.resolve();
    };
    void wrapper.addSetup(reopenAfterClose).catch(() => undefined);
    return wrapper;
  };
}

/** The manager's private entry point of a channel's opening (see healChannels). */
interface Reopenable {
  _onConnect(event: { connection: unknown }): Promise<void>;
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
