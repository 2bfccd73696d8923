import { setTimeout as sleep } from 'node:timers/promises';
import { ServiceProcess } from '@app/testing';
import { SERVICES, type ServiceName } from '../../replicas';

/** A release's built tree: its `dist/` holds `services/<name>/src/main.js`. */
export interface Build {
  version: string;
  dir: string;
}

/** A built service starts in seconds, on a loaded 2-core machine in tens of them; bounded all the same. */
const READY_TIMEOUT_MS = 90_000;
/** A replica's graceful stop (it finishes what it holds); then SIGKILL, reported as such. */
const STOP_TIMEOUT_MS = 30_000;

interface Replica {
  process: ServiceProcess;
  build: Build;
}

/**
 * Every replica of the three services, and a load balancer's view of the gateways: requests go
 * round-robin to the gateways in rotation; a gateway is put in rotation once ready and taken out
 * (its requests in flight finished) before it is stopped, as a balancer with a readiness check
 * and connection draining does.
 */
export class Fleet {
  readonly replicas: Record<ServiceName, Replica[]> = { conversations: [], webhooks: [], gateway: [] };
  /** How each replaced replica ended: `exit 0` when it stopped cleanly. */
  readonly stops: string[] = [];
  /** Every replica ever started, stopped ones too, for their logs. */
  private readonly launched: Array<{ name: string; process: ServiceProcess }> = [];
  private rotation: string[] = [];
  private next = 0;
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly env: Record<string, string>) {}

  /** `perService` replicas of each service of `build`, the RPC services before the gateways. */
  async start(build: Build, perService: number): Promise<void> {
    for (const service of SERVICES) {
      const started = await Promise.all(
        Array.from({ length: perService }, () => this.launch(service, build)),
      );
      this.replicas[service].push(...started.map((process) => ({ process, build })));
      if (service === 'gateway') this.rotation.push(...started.map((process) => process.url));
    }
  }

  /**
   * Runs a request on the next gateway of the rotation, counting it while in flight unless
   * `drained` is false (an event stream, which the gateway's stop ends and its client resumes).
   */
  async through<T>(request: (gateway: string) => Promise<T>, drained = true): Promise<T> {
    if (this.rotation.length === 0) throw new Error('no gateway in rotation');
    const gateway = this.rotation[this.next++ % this.rotation.length];
    if (!drained) return request(gateway);
    this.inFlight.set(gateway, (this.inFlight.get(gateway) ?? 0) + 1);
    try {
      return await request(gateway);
    } finally {
      this.inFlight.set(gateway, this.inFlight.get(gateway)! - 1);
    }
  }

  /**
   * Replaces replica `index` of `service` with one of `build`: starts the new one, waits until it
   * is ready (a gateway then joins the rotation), takes the old one out and stops it (SIGTERM).
   */
  async replace(service: ServiceName, index: number, build: Build): Promise<void> {
    const old = this.replicas[service][index];
    const process = await this.launch(service, build);
    if (service === 'gateway') {
      this.rotation = [...this.rotation.filter((url) => url !== old.process.url), process.url];
      const deadline = Date.now() + STOP_TIMEOUT_MS;
      while ((this.inFlight.get(old.process.url) ?? 0) > 0 && Date.now() < deadline) await sleep(20);
    }
    this.replicas[service][index] = { process, build };
    this.stops.push(`${service}#${index} ${old.build.version}: ${await stopWithin(old.process)}`);
  }

  async stop(): Promise<void> {
    this.rotation = [];
    for (const service of [...SERVICES].reverse())
      await Promise.all(this.replicas[service].map((replica) => stopWithin(replica.process)));
  }

  /** The error and fatal lines every replica logged, each named by its service, release and start. */
  errorLines(): string[] {
    return this.launched.flatMap(({ name, process }) =>
      process.logs
        .split('\n')
        .filter((line) => /^\{"level":"(error|fatal)"/.test(line))
        .map((line) => `${name}: ${line}`),
    );
  }

  private async launch(service: ServiceName, build: Build): Promise<ServiceProcess> {
    const process = await ServiceProcess.start(service, this.env, READY_TIMEOUT_MS, build.dir);
    this.launched.push({ name: `${service} ${build.version} #${this.launched.length}`, process });
    return process;
  }
}

/** SIGTERM, waited for at most STOP_TIMEOUT_MS, then SIGKILL. */
async function stopWithin(process: ServiceProcess): Promise<string> {
  const code = await Promise.race([process.stop(), sleep(STOP_TIMEOUT_MS).then(() => 'timeout' as const)]);
  if (code !== 'timeout') return `exit ${code}`;
  await process.kill();
  return `killed after ${STOP_TIMEOUT_MS} ms`;
}
