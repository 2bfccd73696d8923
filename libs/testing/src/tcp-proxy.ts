import net from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a real Postgres, RabbitMQ or Redis, so a test can make that
 * dependency unreachable for one service (`cut`: connections dropped, new ones refused) and bring
 * it back (`restore`, same port) without touching the server the other tests share.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();

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
    for (const socket of this.sockets) socket.destroy();
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

  close(): Promise<void> {
    return this.cut();
  }

  private relay(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => (socket === client ? upstream : client).destroy());
    }
    client.pipe(upstream).pipe(client);
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
