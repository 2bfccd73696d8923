import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { eventually } from './eventually';

const ROOT = path.resolve(__dirname, '../../..');

export type ServiceName = 'gateway' | 'conversations' | 'webhooks';

/**
 * A service as a real operating-system process, compiled on the fly from TypeScript
 * (@swc-node/register), with the run's database and vhost in its environment. For tests that
 * need several replicas, kill a process, or send it SIGTERM.
 */
export class ServiceProcess {
  private output = '';

  private constructor(
    readonly name: ServiceName,
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-200_000);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
  }

  /**
   * Starts the service and resolves once it is ready (the gateway answers /health/ready, the
   * others log that they are). `url` is the gateway's API or the other services' ops server.
   */
  static async start(
    name: ServiceName,
    env: Record<string, string> = {},
    timeoutMs = 30_000,
  ): Promise<ServiceProcess> {
    const portVariable = name === 'gateway' ? 'PORT' : 'OPS_PORT';
    const port = String(env[portVariable] ?? (await freePort()));
    const child = spawn(
      process.execPath,
      ['-r', '@swc-node/register', path.join(ROOT, 'services', name, 'src', 'main.ts')],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          LOG_LEVEL: 'info',
          HOST: '127.0.0.1',
          OPS_HOST: '127.0.0.1',
          ...env,
          [portVariable]: port,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const service = new ServiceProcess(name, child, `http://127.0.0.1:${port}`);
    try {
      await eventually(
        async () => {
          if (child.exitCode !== null)
            throw new Error(`${name} exited with ${child.exitCode}:\n${service.output}`);
          return name === 'gateway'
            ? (await fetch(`${service.url}/health/ready`)).ok
            : service.logged(`${name} service ready`);
        },
        timeoutMs,
        100,
      );
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
    return service;
  }

  /** The service's log output so far (JSON lines). */
  get logs(): string {
    return this.output;
  }

  logged(text: string): boolean {
    return this.output.includes(text);
  }

  /** SIGTERM and wait for a graceful exit; resolves with the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    // A process that died of a signal has no exit code, only a signalCode.
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    const exited = once(this.child, 'exit');
    this.child.kill(signal);
    const [code] = await exited;
    return code as number | null;
  }

  /** SIGKILL: the process dies mid-work, as on a crash. */
  kill(): Promise<number | null> {
    return this.stop('SIGKILL');
  }
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}
