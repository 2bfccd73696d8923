import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { eventually } from './eventually';
import { OutputTail, spawnBuilt, spawnFromSource } from './source-process';

export type ServiceName = 'gateway' | 'conversations' | 'webhooks';

/**
 * A service as a real operating-system process, compiled on the fly from TypeScript
 * (@swc-node/register), with the run's database and vhost in its environment. For tests that
 * need several replicas, kill a process, or send it SIGTERM.
 */
export class ServiceProcess {
  private readonly output: OutputTail;

  private constructor(
    readonly name: ServiceName,
    readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.output = new OutputTail(child, 200_000);
  }

  /**
   * Starts the service and resolves once it is ready (it answers /health/ready, whatever its log
   * level). `url` is the gateway's API or the other services' ops server. `built` runs the
   * compiled service of another tree instead (a release's checkout: `<built>/dist/services/...`).
   */
  static async start(
    name: ServiceName,
    env: Record<string, string> = {},
    timeoutMs = 30_000,
    built?: string,
  ): Promise<ServiceProcess> {
    const portVariable = name === 'gateway' ? 'PORT' : 'OPS_PORT';
    const port = String(env[portVariable] ?? (await freePort()));
    const child = built
      ? spawnBuilt(built, `dist/services/${name}/src/main.js`, { ...env, [portVariable]: port })
      : spawnFromSource(`services/${name}/src/main.ts`, [], { ...env, [portVariable]: port });
    const service = new ServiceProcess(name, child, `http://127.0.0.1:${port}`);
    try {
      await eventually(
        async () => {
          if (child.exitCode !== null)
            throw new Error(`${name} exited with ${child.exitCode}:\n${service.logs}`);
          return (await fetch(`${service.url}/health/ready`).catch(() => undefined))?.ok;
        },
        timeoutMs,
        100,
      );
    } catch (error) {
      child.kill('SIGKILL');
      const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      throw new Error(
        `${name} was not ready (GET /health/ready) within ${timeoutMs} ms: ${reason}\n${service.logs.slice(-4000)}`,
      );
    }
    return service;
  }

  /** The service's log output so far (JSON lines). */
  get logs(): string {
    return this.output.text;
  }

  logged(text: string): boolean {
    return this.output.text.includes(text);
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

/** A port no one listens on now. */
export async function freePort(): Promise<number> {
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
