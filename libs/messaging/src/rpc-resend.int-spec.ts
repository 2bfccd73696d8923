import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import amqplib from 'amqplib';
import { rpcOperation, type RpcRequest, Strict } from '@app/contracts';
import { DomainError } from '@app/errors';
import { capturedLogger, eventually, replyToOnNode, sleep, TcpProxy } from '@app/testing';
import { connectAmqp } from './amqp-connection';
import { DirectReplies } from './direct-replies';
import { RpcClient } from './rpc-client';
import { rpcQueueOptions } from './rpc-queue';
import { RpcServer } from './rpc-server';

const Receipt = Strict({ commandId: Type.String(), serial: Type.Integer() });
const operation = rpcOperation('spec.apply', Strict({ value: Type.Integer() }), Receipt);

/** A handler applying each command id once, as the services' command log does: a repeat gets the first reply. */
class OnceHandler {
  readonly deliveries = new Map<string, number>();
  private readonly replies = new Map<string, { commandId: string; serial: number }>();
  private serial = 0;
  /** While set, commands are held (in flight) until it resolves. */
  gate?: Promise<void>;

  readonly handle = async (request: RpcRequest) => {
    this.deliveries.set(request.commandId, (this.deliveries.get(request.commandId) ?? 0) + 1);
    await this.gate;
    const applied = this.replies.get(request.commandId) ?? {
      commandId: request.commandId,
      serial: ++this.serial,
    };
    this.replies.set(request.commandId, applied);
    return applied;
  };

  get applied(): number {
    return this.replies.size;
  }
}

/** A gate and the function that opens it. */
function gate(): { closed: Promise<void>; open: () => void } {
  let open!: () => void;
  const closed = new Promise<void>((resolve) => (open = resolve));
  return { closed, open };
}

/**
 * Real RabbitMQ (the run's vhost), the client or a server reaching it through a TCP proxy that a
 * test cuts (docs/scaling.md, "RabbitMQ cluster"): commands in flight when the client's
 * connection is lost are sent again on the next one under the same command id, commands made
 * while it is down wait for it, a reply that comes twice is dropped, and a server that vanishes
 * mid-command costs no call. Every call is answered: 0 failures.
 */
describe('RPC over a lost broker connection', () => {
  const { logger } = capturedLogger('error');
  const context = () => ({ accountId: randomUUID(), requestId: randomUUID() });
  const closers: Array<() => Promise<unknown>> = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  });

  /** A queue of this test's own with a server on `url`, handled by `handler`. */
  async function startServer(queue: string, url: string, handler: OnceHandler): Promise<RpcServer> {
    const connection = connectAmqp(url, `rpc-resend-server-${queue}`, logger);
    const replies = new DirectReplies(url, `rpc-resend-replies-${queue}`, logger);
    const server = new RpcServer({
      connection,
      replies,
      queue,
      queueType: 'classic',
      deadLetterQueue: `${queue}.dead`,
      presenceExchange: `${queue}.presence`,
      prefetch: 50,
      operations: [{ operation }],
      logger,
      drainTimeoutMs: 100, // a killed server's held commands never finish
    });
    server.addHandler(operation.pattern, (request: RpcRequest) => handler.handle(request));
    await new Promise<void>((resolve, reject) =>
      server.listen((error) => (error instanceof Error ? reject(error) : resolve())),
    );
    closers.push(
      () => connection.close(),
      () => replies.close(),
      () => server.close(),
    );
    return server;
  }

  async function startClient(queue: string, url: string, timeoutMs = 10_000): Promise<RpcClient> {
    const connection = connectAmqp(url, `rpc-resend-client-${queue}`, logger);
    const client = new RpcClient({
      connection,
      queue,
      queueType: 'classic',
      presenceExchange: `${queue}.presence`,
      timeoutMs,
    });
    await client.waitForConnect();
    closers.push(
      () => connection.close(),
      () => client.close(),
    );
    return client;
  }

  async function proxy(): Promise<TcpProxy> {
    const relay = await TcpProxy.for(process.env.AMQP_URL!);
    closers.push(() => relay.close());
    return relay;
  }

  const send = (client: RpcClient, calls: number) =>
    Array.from({ length: calls }, (_, value) =>
      client.call(operation, { ...context(), commandId: randomUUID() }, { value }),
    );

  it("the client's connection cut with 20 commands in flight: each is sent again under its command id, all 20 answered, each applied once", async () => {
    const queue = `spec.resend.${randomUUID()}`;
    const handler = new OnceHandler();
    await startServer(queue, process.env.AMQP_URL!, handler);
    const relay = await proxy();
    const client = await startClient(queue, relay.route(process.env.AMQP_URL!));

    const held = gate();
    handler.gate = held.closed;
    const inFlight = send(client, 20);
    await eventually(() => handler.deliveries.size === 20, 10_000, 20);
    await relay.cut();
    // Sent while there is no broker connection: they wait for the next one.
    const whileCut = send(client, 5);
    held.open(); // the first copies' replies go to the lost channel and are dropped by the broker
    await sleep(300);
    await relay.restore();

    const outcomes = await Promise.allSettled([...inFlight, ...whileCut]);
    const failed = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(failed).toEqual([]);
    const receipts = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<{ serial: number }>).value);
    expect(new Set(receipts.map((receipt) => receipt.serial)).size).toBe(25);
    expect(handler.applied).toBe(25);
    // The commands in flight were delivered again (same command id), not only waited for.
    const resent = [...handler.deliveries.values()].filter((count) => count >= 2).length;
    expect(resent).toBeGreaterThanOrEqual(20);
  });

  it('a server killed mid-command (its connection lost, unannounced): its commands and those sent before another server starts are all answered', async () => {
    const queue = `spec.resend.${randomUUID()}`;
    const doomed = new OnceHandler();
    doomed.gate = gate().closed; // never answers: it dies with the commands
    const relay = await proxy();
    await startServer(queue, relay.route(process.env.AMQP_URL!), doomed);
    const client = await startClient(queue, process.env.AMQP_URL!);

    const inFlight = send(client, 10);
    await eventually(() => doomed.deliveries.size === 10, 10_000, 20);
    await relay.cut(); // the broker sees the consumer's connection drop: no consumer, none announced gone
    await eventually(async () => (await consumersOf(queue)) === 0, 10_000, 50);
    await sleep(1100); // past the client's trust in its last consumer count: it sees none now
    const meanwhile = send(client, 5);
    const survivor = new OnceHandler();
    await startServer(queue, process.env.AMQP_URL!, survivor);

    const outcomes = await Promise.allSettled([...inFlight, ...meanwhile]);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    expect(survivor.applied).toBe(15);
  });

  it('a reply that arrives twice is dropped: the call gets the first, later calls are unaffected', async () => {
    const queue = `spec.resend.${randomUUID()}`;
    const connection = await amqplib.connect(process.env.AMQP_URL!);
    closers.push(() => connection.close());
    const channel = await connection.createChannel();
    await channel.assertQueue(queue, rpcQueueOptions('classic'));
    await channel.consume(queue, (message) => {
      if (!message) return;
      const { commandId } = JSON.parse(message.content.toString()) as RpcRequest;
      const { replyTo, correlationId } = message.properties as { replyTo: string; correlationId: string };
      for (const serial of [1, 2]) {
        const reply = { ok: true, data: { commandId, serial } };
        channel.sendToQueue(replyTo, Buffer.from(JSON.stringify(reply)), { correlationId });
      }
      channel.ack(message);
    });
    const client = await startClient(queue, process.env.AMQP_URL!);

    const first = await client.call(operation, { ...context(), commandId: 'twice-1' }, { value: 1 });
    const second = await client.call(operation, { ...context(), commandId: 'twice-2' }, { value: 2 });
    expect([first, second]).toEqual([
      { commandId: 'twice-1', serial: 1 },
      { commandId: 'twice-2', serial: 1 },
    ]);
  });

  it('replies to callers on a node that is not running (RabbitMQ 3.10.8 crashes on them) cost no other call, and their commands are applied once', async () => {
    const queue = `spec.resend.${randomUUID()}`;
    // A consumer on the node that died: it holds the commands of callers on that node.
    const dying = await amqplib.connect(process.env.AMQP_URL!);
    const channel = await dying.createChannel();
    await channel.assertQueue(queue, rpcQueueOptions('classic'));
    const stale = ['stale-1', 'stale-2', 'stale-3'];
    const held: string[] = [];
    const { consumerTag } = await channel.consume(queue, (message) => {
      if (message) held.push(message.properties.correlationId as string);
    });
    for (const commandId of stale) {
      const request = { pattern: operation.pattern, data: { value: 0 }, commandId, ...context() };
      channel.sendToQueue(queue, Buffer.from(JSON.stringify(request)), {
        correlationId: commandId,
        replyTo: replyToOnNode('reply@1'),
        contentType: 'application/json',
      });
    }
    await eventually(() => held.length === stale.length, 10_000, 20);
    await channel.cancel(consumerTag); // holds them, unacknowledged, without taking more

    const handler = new OnceHandler();
    await startServer(queue, process.env.AMQP_URL!, handler);
    const client = await startClient(queue, process.env.AMQP_URL!);
    const before = send(client, 10);
    await dying.close(); // the broker gives the three back: redelivered to the server
    const after = send(client, 10);

    const outcomes = await Promise.allSettled([...before, ...after]);
    expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
    // The server's own connection never went down: nothing was given back and delivered again.
    expect(stale.map((commandId) => handler.deliveries.get(commandId))).toEqual([1, 1, 1]);
    expect(handler.applied).toBe(23);
  });

  it('no broker until the deadline: 503 service_unavailable, and the command is never sent later', async () => {
    const queue = `spec.resend.${randomUUID()}`;
    const handler = new OnceHandler();
    await startServer(queue, process.env.AMQP_URL!, handler);
    const relay = await proxy();
    const client = await startClient(queue, relay.route(process.env.AMQP_URL!), 1500);

    await relay.cut();
    const failure = await client
      .call(operation, { ...context(), commandId: 'never-sent' }, { value: 1 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DomainError);
    expect((failure as DomainError).code).toBe('service_unavailable');
    await relay.restore();
    expect(await client.call(operation, context(), { value: 2 })).toMatchObject({ serial: 1 });
    expect(handler.deliveries.has('never-sent')).toBe(false);
  });
});

/** The consumers of `queue` in the run's vhost, as the broker counts them. */
async function consumersOf(queue: string): Promise<number> {
  const connection = await amqplib.connect(process.env.AMQP_URL!);
  try {
    const channel = await connection.createChannel();
    return (await channel.checkQueue(queue)).consumerCount;
  } finally {
    await connection.close();
  }
}
