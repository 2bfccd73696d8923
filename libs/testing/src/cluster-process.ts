import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { eventually } from './eventually';
import { OutputTail, spawnFromSource } from './source-process';

export type ReplicaCounts = Record<'gateway' | 'conversations' | 'webhooks', number>;

/**
 * `npm run start:cluster` as a real process tree: the supervisor (scripts/start.ts, from source)
 * and every replica it starts, with the run's database, vhost and Redis prefix. Replicas are
 * named as the supervisor names them (`gateway#0`, `webhooks#1`); the supervisor's log lines
 * tell their process ids and how they exited.
 */
export class ClusterProcess {
  private readonly output: OutputTail;

  private constructor(
    private readonly supervisor: ChildProcess,
    readonly counts: ReplicaCounts,
    private readonly basePort: number,
  ) {
    this.output = new OutputTail(supervisor, 2_000_000);
  }

  /** Starts the cluster and resolves once every replica is ready. */
  static async start(
    counts: ReplicaCounts,
    env: Record<string, string> = {},
    timeoutMs = 90_000,
  ): Promise<ClusterProcess> {
    const basePort = await freePortRange(counts.gateway);
    const args = Object.entries(counts).flatMap(([service, count]) => [`--${service}`, String(count)]);
    const supervisor = spawnFromSource('scripts/start.ts', args, {
      OPS_PORT: '0',
      ...env,
      PORT: String(basePort),
    });
    const cluster = new ClusterProcess(supervisor, counts, basePort);
    try {
      await eventually(
        async () => {
          if (supervisor.exitCode !== null)
            throw new Error(`the cluster exited with ${supervisor.exitCode}:\n${cluster.logs.slice(-5000)}`);
          const ready = (service: string) =>
            cluster.logs.split(`"msg":"${service} service ready"`).length - 1;
          if (ready('conversations') < counts.conversations || ready('webhooks') < counts.webhooks)
            return false;
          const gateways = await Promise.all(
            cluster.gatewayUrls.map((url) =>
              fetch(`${url}/health/ready`).then(
                (r) => r.ok,
                () => false,
              ),
            ),
          );
          return gateways.every(Boolean);
        },
        timeoutMs,
        200,
      );
    } catch (error) {
      await cluster.stop('SIGKILL');
      throw error;
    }
    return cluster;
  }

  get logs(): string {
    return this.output.text;
  }

  get gatewayUrls(): string[] {
    return Array.from(
      { length: this.counts.gateway },
      (_, index) => `http://127.0.0.1:${this.basePort + index}`,
    );
  }

  /** The process id of a replica, e.g. `conversations#0`. */
  pid(replica: string): number {
    const match = new RegExp(`start: ${escape(replica)} started \\(pid (\\d+)`).exec(this.output.text);
    if (!match) throw new Error(`${replica} was not started`);
    return Number(match[1]);
  }

  /** Sends a signal to one replica (not through the supervisor, as an operator or orchestrator would). */
  signal(replica: string, signal: NodeJS.Signals = 'SIGTERM'): void {
    process.kill(this.pid(replica), signal);
  }

  /** Waits until the supervisor reports the replica's exit; resolves with it, e.g. `exited with code 0`. */
  exitOf(replica: string, timeoutMs = 40_000): Promise<string> {
    return eventually(
      () =>
        new RegExp(`start: ${escape(replica)} ((exited with code|was killed by) \\w+)`).exec(
          this.output.text,
        )?.[1],
      timeoutMs,
      100,
    );
  }

  /** Stops the whole cluster (SIGTERM: gracefully) and resolves with the supervisor's exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.supervisor.exitCode !== null) return this.supervisor.exitCode;
    const exited = once(this.supervisor, 'exit');
    if (signal === 'SIGKILL') {
      // The replicas are the supervisor's children: kill them first, or they would be orphaned.
      for (const match of this.output.text.matchAll(/started \(pid (\d+)/g)) {
        try {
          process.kill(Number(match[1]), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
    this.supervisor.kill(signal);
    const [code] = await exited;
    return code as number | null;
  }
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\#]/g, '\\$&');

/**
 * A port such that it and the `count - 1` ports after it are free (gateway i listens on base + i).
 * Taken below the kernel's ephemeral range: a port the system hands out (as `listen(0)` would) can
 * be taken by any outgoing connection, such as the replicas' own to Postgres, in the seconds between
 * this check and the gateways listening.
 */
export async function freePortRange(count: number): Promise<number> {
  const ephemeralLow = ephemeralPortsFrom();
  const low = 10_000;
  for (;;) {
    const base = low + Math.floor(Math.random() * (ephemeralLow - low - count));
    const ports = await Promise.all(
      Array.from({ length: count }, (_, i) => listenOn(base + i).catch(() => null)),
    );
    if (ports.every((port) => port !== null)) return base;
  }
}

/** Where the kernel's ports for outgoing connections begin (Linux's default when it cannot be read). */
function ephemeralPortsFrom(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 10_100) return low;
  } catch {
    // not Linux: the default below
  }
  return 32_768;
}

function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}
