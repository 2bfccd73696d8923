import { randomUUID } from 'node:crypto';

/**
 * A direct reply-to address as RabbitMQ writes it for a caller's channel on `node`: the channel's
 * pid in Erlang's external term format (NEW_PID_EXT, the node an ATOM_UTF8_EXT), then a key. With
 * a node that does not exist it stands for a caller on a node that is not running.
 */
export function replyToOnNode(node: string): string {
  const name = Buffer.from(node);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(name.length);
  const pid = Buffer.concat([Buffer.from([131, 88, 118]), length, name, Buffer.alloc(12)]);
  return `amq.rabbitmq.reply-to.${pid.toString('base64')}.${randomUUID()}`;
}
