import { execFile } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../../..');

export interface RunResult {
  stdout: string;
  stderr: string;
}

/** Runs a command to the end (bounded by `timeoutMs`); a non-zero exit rejects with its output. */
export function run(command: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = {}) {
  return new Promise<RunResult>((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const tail = `${stderr}`.trim().split('\n').slice(-30).join('\n');
          reject(new Error(`${command} ${args.join(' ')}: ${error.message}\n${tail}`));
        } else resolve({ stdout: `${stdout}`, stderr: `${stderr}` });
      },
    );
  });
}

export const docker = (args: string[], timeoutMs = 60_000) => run('docker', args, timeoutMs);

/** The monitoring profile's Prometheus, published on 127.0.0.1:9090 by the compose file. */
async function prometheusApi<T>(path: string): Promise<{ data: T }> {
  const response = await fetch(`http://127.0.0.1:9090/api/v1/${path}`);
  if (!response.ok) throw new Error(`Prometheus /api/v1/${path}: ${response.status}`);
  return (await response.json()) as { data: T };
}

export type AppService = 'gateway' | 'conversations' | 'webhooks';

/** Where each service's own HTTP server (health, metrics) listens inside its container. */
const OPS_PORTS: Record<AppService, number> = { gateway: 3000, conversations: 3101, webhooks: 3201 };

/**
 * The repository's docker-compose.yml as a user runs it (`docker compose ...` in the checkout),
 * under a project name of its own so that it never touches a user's stack, with the one setting
 * the tests need from the environment: webhooks may target the receiver container's private address.
 */
export class ComposeProject {
  readonly network: string;

  constructor(readonly name: string) {
    this.network = `${name}_default`;
  }

  compose(args: string[], timeoutMs = 120_000): Promise<RunResult> {
    return run('docker', ['compose', '-p', this.name, ...args], timeoutMs, {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
  }

  /** Names of the service's running containers, replica 1 first. */
  async containers(service: string): Promise<string[]> {
    const { stdout } = await this.compose(['ps', '--status', 'running', '--format', '{{.Name}}', service]);
    const replica = (name: string) => Number(name.slice(name.lastIndexOf('-') + 1));
    return stdout
      .split('\n')
      .filter(Boolean)
      .sort((a, b) => replica(a) - replica(b));
  }

  /** Health of every container of the project: name -> healthy, starting, unhealthy or exited. */
  async health(): Promise<Record<string, string>> {
    const { stdout } = await this.compose(['ps', '--all', '--format', '{{.Name}} {{.State}} {{.Health}}']);
    return Object.fromEntries(
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [name, state, health] = line.split(' ');
          return [name, state === 'running' ? health || 'running' : state];
        }),
    );
  }

  /** One SQL query through psql in the postgres container; rows as arrays of text columns. */
  async sql(query: string): Promise<string[][]> {
    const { stdout } = await this.compose([
      'exec',
      '-T',
      'postgres',
      'psql',
      '-U',
      'postgres',
      '-d',
      'postgres',
      '-v',
      'ON_ERROR_STOP=1',
      '-At',
      '-F',
      '\t',
      '-c',
      query,
    ]);
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'));
  }

  /** A container's /metrics, read from inside it (no service but the proxy publishes a port). */
  async metrics(container: string, service: AppService): Promise<string> {
    const script = `require('http').get('http://127.0.0.1:${OPS_PORTS[service]}/metrics', (r) => r.pipe(process.stdout))`;
    return (await docker(['exec', container, 'node', '-e', script])).stdout;
  }

  /** Per job (service), how many targets the monitoring profile's Prometheus scraped successfully last. */
  async prometheusTargetsUp(): Promise<Record<string, number>> {
    const { data } = await prometheusApi<{
      activeTargets: Array<{ labels: { job: string }; health: string }>;
    }>('targets?state=active');
    const up: Record<string, number> = {};
    for (const { labels, health } of data.activeTargets)
      if (health === 'up') up[labels.job] = (up[labels.job] ?? 0) + 1;
    return up;
  }

  /** The alerts of the rules Prometheus loaded. */
  async prometheusAlertNames(): Promise<string[]> {
    const { data } = await prometheusApi<{ groups: Array<{ rules: Array<{ type: string; name: string }> }> }>(
      'rules',
    );
    return data.groups.flatMap(({ rules }) =>
      rules.filter(({ type }) => type === 'alerting').map(({ name }) => name),
    );
  }

  /** Containers, networks and volumes of the project (the monitoring profile's too), whatever state they are in. */
  down(): Promise<RunResult> {
    return this.compose(
      ['--profile', 'monitoring', 'down', '--volumes', '--remove-orphans', '--timeout', '30'],
      180_000,
    );
  }
}
