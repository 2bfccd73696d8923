import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { rpcQuery, Strict } from '@app/contracts';
import { DomainError } from '@app/errors';
import { capturedLogger } from '@app/testing';
import { connectAmqp } from './amqp-connection';
import { DirectReplies } from './direct-replies';
import { RpcClient } from './rpc-client';
import { RpcServer } from './rpc-server';

const Greeting = Strict({ name: Type.String(), count: Type.Integer() });
const operation = rpcQuery('spec.greet', Strict({ name: Type.String() }), Greeting);

/**
 * Real RabbitMQ (the run's vhost): replies leave the service serialized with their operation's
 * reply schema, which the gateway may send on as they are (RpcClient.callForJson).
 */
describe('RPC replies', () => {
  const { logger, lines } = capturedLogger('error');
  const connection = connectAmqp(process.env.AMQP_URL!, 'rpc-replies-spec', logger);
  const queue = `spec.rpc.${randomUUID()}`;
  const presenceExchange = `${queue}.presence`;
  const replies = new DirectReplies(process.env.AMQP_URL!, 'rpc-replies-spec-replies', logger);
  const server = new RpcServer({
    connection,
    replies,
    queue,
    queueType: 'classic',
    deadLetterQueue: `${queue}.dead`,
    presenceExchange,
    prefetch: 8,
    operations: [{ operation }],
    logger,
  });
  const client = new RpcClient({
    connection,
    queue,
    queueType: 'classic',
    presenceExchange,
    timeoutMs: 5000,
  });
  /** What the handler answers next. */
  let answer: unknown;
  const context = () => ({ accountId: randomUUID(), requestId: randomUUID() });

  beforeAll(async () => {
    server.addHandler(operation.pattern, () => Promise.resolve(answer));
    await new Promise<void>((resolve, reject) =>
      server.listen((error) => (error instanceof Error ? reject(error) : resolve())),
    );
    await client.waitForConnect();
  });

  afterAll(async () => {
    await client.close();
    await server.close();
    await replies.close();
    await connection.close();
  });

  it('sends the data in its schema’s fields and order only, as JSON the caller can pass on unparsed', async () => {
    answer = { count: 2, name: 'Ada', internal: 'not in the contract' };
    const json = await client.callForJson(operation, context(), { name: 'Ada' });
    expect(json.toString()).toBe('{"name":"Ada","count":2}');
    expect(await client.call(operation, context(), { name: 'Ada' })).toEqual({ name: 'Ada', count: 2 });
  });

  it('answers data that breaks its schema as the bug it is (500), logged, instead of sending it', async () => {
    answer = { name: 'Ada' }; // count is required
    lines.length = 0;
    const failure = await client.call(operation, context(), { name: 'Ada' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('internal_error');
    expect(lines.map((line) => JSON.parse(line).msg as string)).toContain(
      'rpc reply does not match its schema',
    );
  });
});
