import { rpcQueueOptions, rpcQueueType } from './rpc-queue';

describe('rpcQueueType', () => {
  const oneBroker = 'amqp://guest:guest@127.0.0.1:5672';
  const cluster = 'amqp://a:5672, amqp://b:5672,amqp://c:5672';

  it('is classic for one broker and quorum for a cluster when left to auto', () => {
    expect(rpcQueueType({ RPC_QUEUE_TYPE: 'auto', AMQP_URL: oneBroker })).toBe('classic');
    expect(rpcQueueType({ RPC_QUEUE_TYPE: 'auto', AMQP_URL: cluster })).toBe('quorum');
  });

  it('is what is set, whatever AMQP_URL names (a cluster behind one load-balanced address)', () => {
    expect(rpcQueueType({ RPC_QUEUE_TYPE: 'quorum', AMQP_URL: oneBroker })).toBe('quorum');
    expect(rpcQueueType({ RPC_QUEUE_TYPE: 'classic', AMQP_URL: cluster })).toBe('classic');
  });

  it('declares a quorum queue with its type argument and a classic one as before quorum queues', () => {
    expect(rpcQueueOptions('quorum')).toEqual({ durable: true, arguments: { 'x-queue-type': 'quorum' } });
    expect(rpcQueueOptions('classic')).toEqual({ durable: true });
  });
});
