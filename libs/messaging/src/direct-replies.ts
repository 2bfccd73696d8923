import type { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, Options } from 'amqplib';
import type { Logger } from 'pino';
import { connectAmqp } from './amqp-connection';
import { DIRECT_REPLY_QUEUE } from './rpc-queue';

const DIRECT_REPLY_PREFIX = `${DIRECT_REPLY_QUEUE}.`;

/** How long a reply written on a channel may still be lost with it: sent again if it closes. */
const UNROUTED_MS = 1000;
/**
 * How long replies to a node found not running are dropped: twice the default RPC_TIMEOUT_MS, the
 * TTL of its callers' commands. One that lives longer costs one more crash of this connection,
 * which finds the node out again.
 */
const NOT_RUNNING_NODE_MS = 10_000;
/** The close code of a connection whose channel crashed in the broker. */
const INTERNAL_ERROR = 541;
/** Replies kept to write on the next channel; beyond, the oldest are dropped. */
const PENDING_LIMIT = 10_000;

interface Reply {
  replyTo: string;
  /** The broker node replyTo names (its key), or the address itself if it is not direct reply-to. */
  node: string;
  content: Buffer;
  options: Options.Publish;
  writtenAt: number;
}

/**
 * The node an address of direct reply-to names: the caller's channel pid in Erlang's external term
 * format (base64), whose node RabbitMQ 3.10+ writes as `reply@<hash of the node name>`. Undefined
 * for any other address.
 */
export function replyNodeOf(replyTo: string): string | undefined {
  if (!replyTo.startsWith(DIRECT_REPLY_PREFIX)) return undefined;
  const encodedPid = replyTo.slice(DIRECT_REPLY_PREFIX.length).split('.')[0];
  const term = Buffer.from(encodedPid, 'base64');
  // 131: external term format; 88 NEW_PID_EXT or 103 PID_EXT; then the node as an atom.
  if (term[0] !== 131 || (term[1] !== 88 && term[1] !== 103)) return undefined;
  const [lengthBytes, encoding] = ATOM_TAGS[term[2]] ?? [];
  if (!lengthBytes) return undefined;
  const length = lengthBytes === 1 ? term[3] : term.readUInt16BE(3);
  const start = 3 + lengthBytes;
  return term.length < start + length ? undefined : term.toString(encoding, start, start + length);
}

/** Erlang's atom tags: the bytes of their length, and their text's encoding. */
const ATOM_TAGS: Record<number, [1 | 2, BufferEncoding]> = {
  100: [2, 'latin1'], // ATOM_EXT
  115: [1, 'latin1'], // SMALL_ATOM_EXT
  118: [2, 'utf8'], // ATOM_UTF8_EXT
  119: [1, 'utf8'], // SMALL_ATOM_UTF8_EXT
};

/**
 * The replies to redelivered commands, on a connection of their own.
 *
 * RabbitMQ 3.10.8 crashes the channel that routes a reply to a direct reply-to address whose node is
 * not running (`{case_clause,error}` in `rabbit_channel:deliver_reply/2`), and closes the whole
 * connection with 541 INTERNAL_ERROR. Such replies are routine after a node dies: a command whose
 * consumer was on that node is redelivered, and its caller, on the same node, has sent it again on a
 * live one. On the consumer's connection each crash gave the broker back every unacknowledged
 * command, the stale ones among them, which crashed the next connection too until their TTL ran out
 * (4-5 s of failed and late requests, docs/scaling.md). Here a crash costs only this connection,
 * and is found out:
 * - replies written in the last UNROUTED_MS before a channel closes may not have been routed, so
 *   they are written again on the next channel (a caller drops a reply it already has), one node at
 *   a time, each node's followed by a round trip that proves the broker routed them;
 * - the node whose round trip a 541 ended is not running: its replies are dropped, and so are
 *   further replies to it for NOT_RUNNING_NODE_MS.
 */
export class DirectReplies {
  private readonly connection: AmqpConnectionManager;
  private readonly wrapper: ChannelWrapper;
  private channel?: Channel;
  /** Written on the current channel within UNROUTED_MS, oldest first: lost with it if it closes. */
  private written: Reply[] = [];
  /** To write on the next channel, node by node: what a lost one may not have routed, and what came meanwhile. */
  private pending: Reply[] = [];
  /** One node's replies whose round trip the connection's loss cut short. */
  private interrupted: Reply[] = [];
  /** Whether the connection was last lost to a crash in the broker (until a channel is set up). */
  private lostWithCrash = false;
  /** Nodes found not running, until when (performance.now()). */
  private readonly notRunning = new Map<string, number>();

  /** Opens its own connection to AMQP_URL (`name` is the connection's name in the broker). */
  constructor(
    amqpUrl: string,
    name: string,
    private readonly logger: Logger,
  ) {
    this.connection = connectAmqp(amqpUrl, name, logger);
    this.connection.on('disconnect', ({ err }: { err?: { code?: number } }) => {
      this.lostWithCrash = err?.code === INTERNAL_ERROR;
    });
    this.wrapper = this.connection.createChannel({
      name: 'rpc-replies',
      confirm: false,
      setup: (channel: Channel) => this.setUp(channel),
    });
  }

  get connected(): boolean {
    return this.channel !== undefined;
  }

  /** Sends the reply now if there is a channel, or as soon as there is one. */
  send(replyTo: string, content: Buffer, options: Options.Publish): void {
    const reply = { replyTo, node: replyNodeOf(replyTo) ?? replyTo, content, options, writtenAt: 0 };
    if (this.isNotRunning(reply.node)) this.drop([reply]);
    else if (this.channel) this.write(this.channel, reply);
    else this.keep([reply]);
  }

  async close(): Promise<void> {
    await this.wrapper.close();
    await this.connection.close();
  }

  /**
   * Writes what is pending one node at a time, each node's followed by a round trip, before the
   * channel takes new replies. If the connection is lost meanwhile, the node being written stays
   * `interrupted` and the rest pending, for the next channel.
   */
  private async setUp(channel: Channel): Promise<void> {
    channel.once('close', () => this.lost(channel));
    const crashed = this.lostWithCrash;
    this.lostWithCrash = false;
    if (this.interrupted.length > 0) {
      if (crashed) this.markNotRunning(this.interrupted);
      else this.pending.unshift(...this.interrupted);
      this.interrupted = [];
    }
    while (this.pending.length > 0) {
      const { node } = this.pending[0];
      this.interrupted = this.pending.filter((reply) => reply.node === node);
      this.pending = this.pending.filter((reply) => reply.node !== node);
      if (this.isNotRunning(node)) {
        this.drop(this.interrupted);
      } else {
        for (const reply of this.interrupted)
          channel.sendToQueue(reply.replyTo, reply.content, reply.options);
        // Answered only once the broker has routed what came before it on this channel (bounded
        // by the connection's heartbeat if the broker hangs).
        await channel.checkExchange('amq.direct');
      }
      this.interrupted = [];
    }
    this.channel = channel;
  }

  private write(channel: Channel, reply: Reply): void {
    try {
      channel.sendToQueue(reply.replyTo, reply.content, reply.options);
    } catch {
      // The channel is closing: the next one sends it.
      this.keep([reply]);
      return;
    }
    reply.writtenAt = performance.now();
    this.written.push(reply);
    const stillUnrouted = this.written.findIndex(
      (earlier) => reply.writtenAt - earlier.writtenAt < UNROUTED_MS,
    );
    if (stillUnrouted > 0) this.written.splice(0, stillUnrouted);
  }

  private lost(channel: Channel): void {
    if (this.channel !== channel) return; // lost while being set up: `interrupted` says what
    this.channel = undefined;
    const since = performance.now() - UNROUTED_MS;
    this.keep(this.written.filter((reply) => reply.writtenAt >= since));
    this.written = [];
  }

  private keep(replies: Reply[]): void {
    this.pending.push(...replies);
    if (this.pending.length > PENDING_LIMIT)
      this.drop(this.pending.splice(0, this.pending.length - PENDING_LIMIT));
  }

  private isNotRunning(node: string): boolean {
    const until = this.notRunning.get(node);
    if (until === undefined) return false;
    if (until > performance.now()) return true;
    this.notRunning.delete(node);
    return false;
  }

  private markNotRunning(replies: Reply[]): void {
    const { node } = replies[0];
    this.notRunning.set(node, performance.now() + NOT_RUNNING_NODE_MS);
    this.logger.warn(
      { node, for_ms: NOT_RUNNING_NODE_MS },
      'rabbitmq node of a reply-to is not running; its replies are dropped',
    );
    this.drop(replies);
  }

  private drop(replies: Reply[]): void {
    for (const reply of replies)
      this.logger.info(
        { correlation_id: reply.options.correlationId, node: reply.node },
        'rpc reply dropped',
      );
  }
}
