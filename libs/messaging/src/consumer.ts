import type { Channel, ConsumeMessage } from 'amqplib';

/**
 * The callback of a consumer on a channel of `connectAmqp`: messages go to `handle`. The broker
 * cancels a consumer by calling it without a message (its queue was deleted, or lost with its
 * node); the consumer would then be silently gone for good. The channel is closed instead, and
 * opened and set up again (queue and consumer included) by the connection (see healChannels).
 */
export function consumer(
  channel: Channel,
  handle: (message: ConsumeMessage) => void,
): (message: ConsumeMessage | null) => void {
  return (message) => {
    if (message) handle(message);
    else channel.close().catch(() => undefined);
  };
}
