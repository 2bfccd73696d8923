import { randomUUID } from 'node:crypto';
import amqp, { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import { CONVERSATIONS_RPC_QUEUE, RpcReply, RpcRequest } from '@app/contracts';
import { DIRECT_REPLY_QUEUE as REPLY_TO } from '@app/messaging';

const REPLY_DEADLINE_MS = 10_000;

export interface RpcProbeReply {
  body: RpcReply<any>;
  message: ConsumeMessage;
}

/**
 * A publisher on a service's RPC queue (the conversations service's unless told), driven directly
 * with amqplib as any publisher could, with a direct reply-to consumer correlating replies by id.
 */
export class RpcProbe {
  private readonly waiting = new Map<string, (reply: RpcProbeReply) => void>();
  readonly replies: RpcProbeReply[] = [];

  private constructor(
    readonly connection: ChannelModel,
    readonly channel: Channel,
    private readonly queue: string,
  ) {}

  static async open(queue: string = CONVERSATIONS_RPC_QUEUE): Promise<RpcProbe> {
    const connection = await amqp.connect(process.env.AMQP_URL!);
    const channel = await connection.createChannel();
    const probe = new RpcProbe(connection, channel, queue);
    await channel.consume(
      REPLY_TO,
      (message) => {
        if (!message) return;
        const reply = { body: JSON.parse(message.content.toString('utf8')), message };
        probe.replies.push(reply);
        probe.waiting.get(message.properties.correlationId)?.(reply);
      },
      { noAck: true },
    );
    return probe;
  }

  /** Publishes raw bytes with a reply address; resolves with the reply or rejects at the deadline. */
  callRaw(content: Buffer, correlationId = randomUUID()): Promise<RpcProbeReply> {
    const reply = this.replyFor(correlationId);
    this.channel.sendToQueue(this.queue, content, {
      replyTo: REPLY_TO,
      correlationId,
      contentType: 'application/json',
    });
    return reply;
  }

  call(request: RpcRequest, correlationId = randomUUID()): Promise<RpcProbeReply> {
    return this.callRaw(Buffer.from(JSON.stringify(request)), correlationId);
  }

  replyFor(correlationId: string): Promise<RpcProbeReply> {
    return new Promise<RpcProbeReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(correlationId);
        reject(new Error(`no reply for ${correlationId} within ${REPLY_DEADLINE_MS} ms`));
      }, REPLY_DEADLINE_MS);
      this.waiting.set(correlationId, (reply) => {
        clearTimeout(timer);
        this.waiting.delete(correlationId);
        resolve(reply);
      });
    });
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
