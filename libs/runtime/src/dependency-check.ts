import net from 'node:net';

export interface Dependency {
  name: string;
  url: string;
  defaultPort: number;
  howToStart: string;
}

/** How to start each dependency on any machine: printed when it is unreachable at start-up. */
const hint = (composeService: string, systemService: string, brewFormula: string, variable: string) =>
  `\`docker compose up -d ${composeService}\` from this repository, \`sudo systemctl start ${systemService}\` ` +
  `(Linux) or \`brew services start ${brewFormula}\` (macOS); or set ${variable} to one that runs`;

export const HOW_TO_START = {
  postgres: hint('postgres', 'postgresql', 'postgresql', 'DATABASE_URL'),
  redis: hint('redis', 'redis-server', 'redis', 'REDIS_URL'),
  rabbitmq: hint('rabbitmq', 'rabbitmq-server', 'rabbitmq', 'AMQP_URL'),
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
