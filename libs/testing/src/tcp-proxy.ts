import net from 'node:net';

/** One relayed connection: the client's socket, the upstream one, and bytes held while stalled. */
interface Relay {
  client: net.Socket;
  upstream: net.Socket;
  held: Array<{ to: net.Socket; chunk: Buffer }>;
}

/**
 * A TCP relay on 127.0.0.1 in front of a real Postgres, RabbitMQ or Redis, so a test can make that
 * dependency unreachable for one service (`cut`: connections dropped, new ones refused) or silent
 * (`stall`: connections stay open, nothing gets through either way, as when a network path or the
 * server hangs), and bring it back (`restore`, `resume`; same port) without touching the server
 * the other tests share.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly relays = new Set<Relay>();
  private stalled = false;

  private constructor(
    private readonly target: { host: string; port: number },
    public port = 0,
  ) {}

  /** A proxy for the host and port of `url` (postgres://, amqp://, redis://). */
  static async for(url: string): Promise<TcpProxy> {
    const { hostname, port } = new URL(url);
    const proxy = new TcpProxy({ host: hostname, port: Number(port) });
    await proxy.restore();
    return proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  route(url: string): string {
    const routed = new URL(url);
    routed.hostname = '127.0.0.1';
    routed.port = String(this.port);
    return routed.toString();
  }

  /** Drops every connection and stops accepting new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const relay of this.relays) {
      relay.client.destroy();
      relay.upstream.destroy();
    }
    this.relays.clear();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Accepts connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => this.relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /**
   * From now on nothing is forwarded, either way, on open or new connections: bytes are held (as
   * TCP would retransmit them) until `resume`. Connections are accepted, so connecting succeeds.
   */
  stall(): void {
    this.stalled = true;
  }

  /** Delivers what was held, in order, and forwards again. */
  resume(): void {
    this.stalled = false;
    for (const relay of this.relays) {
      for (const { to, chunk } of relay.held.splice(0)) to.write(chunk);
    }
  }

  close(): Promise<void> {
    this.resume();
    return this.cut();
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    const relay: Relay = { client, upstream, held: [] };
    this.relays.add(relay);
    const forward = (from: net.Socket, to: net.Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (this.stalled) relay.held.push({ to, chunk });
        else to.write(chunk);
      });
      from.on('end', () => to.end());
      from.on('close', () => {
        to.destroy();
        this.relays.delete(relay);
      });
      from.on('error', () => to.destroy());
    };
    forward(client, upstream);
    forward(upstream, client);
  }
}

/** The readiness check each dependency is named by. */
export type Dependency = 'postgres' | 'rabbitmq' | 'redis';

/** A TcpProxy in front of each of the run's Postgres, RabbitMQ and Redis. */
export class DependencyProxies {
  private constructor(readonly proxies: Record<Dependency, TcpProxy>) {}

  static async start(): Promise<DependencyProxies> {
    return new DependencyProxies({
      postgres: await TcpProxy.for(process.env.DATABASE_URL!),
      rabbitmq: await TcpProxy.for(process.env.AMQP_URL!),
      redis: await TcpProxy.for(process.env.REDIS_URL!),
    });
  }

  /** The variables that route a service through the proxies (extra ones are ignored by a service that has no use for them). */
  routes(): { DATABASE_URL: string; AMQP_URL: string; REDIS_URL: string } {
    return {
      DATABASE_URL: this.proxies.postgres.route(process.env.DATABASE_URL!),
      AMQP_URL: this.proxies.rabbitmq.route(process.env.AMQP_URL!),
      REDIS_URL: this.proxies.redis.route(process.env.REDIS_URL!),
    };
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.proxies).map((proxy) => proxy.close()));
  }
}
