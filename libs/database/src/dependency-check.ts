import net from 'node:net';

export interface Dependency {
  name: string;
  url: string;
  defaultPort: number;
  howToStart: string;
}

/** Start commands printed when a dependency is unreachable (DEVELOPERS.md). */
export const HOW_TO_START = {
  postgres: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
  redis:
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  rabbitmq: 'rabbitmq-server -detached',
};

/** Opens a TCP connection to each dependency; resolves with a message per unreachable one. */
export async function findUnreachable(dependencies: Dependency[], timeoutMs = 3000): Promise<string[]> {
  const results = await Promise.all(
    dependencies.map(async (dependency) =>
      (await canConnect(dependency, timeoutMs)) ? undefined : describe(dependency),
    ),
  );
  return results.filter((message): message is string => message !== undefined);
}

function describe({ name, url, howToStart }: Dependency): string {
  const { hostname, port } = new URL(url);
  return `${name} is unreachable at ${hostname}:${port || '(default port)'}; start it with: ${howToStart}`;
}

function canConnect({ url, defaultPort }: Dependency, timeoutMs: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) || defaultPort });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
