import { Counter, Histogram, Registry } from 'prom-client';
import { LATENCY_BUCKETS, METRIC_PREFIX } from '@app/observability';

/** How a call ended for the caller: a reply (`ok` or `error_reply`), or none (`timeout`, `unavailable`). */
export type RpcCallOutcome = 'ok' | 'error_reply' | 'timeout' | 'unavailable';

/** The caller's side of request/reply: latency per service, pattern and outcome, and timeouts. */
export class RpcClientMetrics {
  private readonly duration: Histogram<'service' | 'pattern' | 'outcome'>;
  private readonly timeouts: Counter<'service' | 'pattern'>;

  constructor(registry: Registry) {
    this.duration = new Histogram({
      name: `${METRIC_PREFIX}rpc_client_duration_seconds`,
      help: 'Request/reply calls over RabbitMQ, from publish to reply (or failure), by outcome',
      labelNames: ['service', 'pattern', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.timeouts = new Counter({
      name: `${METRIC_PREFIX}rpc_client_timeouts_total`,
      help: 'Calls that got no reply within RPC_TIMEOUT_MS (answered 504)',
      labelNames: ['service', 'pattern'],
      registers: [registry],
    });
  }

  observe(service: string, pattern: string, outcome: RpcCallOutcome, seconds: number): void {
    this.duration.observe({ service, pattern, outcome }, seconds);
    if (outcome === 'timeout') this.timeouts.inc({ service, pattern });
  }
}

/** How a command ended in the service: handled (`ok`), refused by the domain (`rejected`), or `failed`. */
export type RpcCommandOutcome = 'ok' | 'rejected' | 'failed';

/** The service's side: commands handled and their duration; unparseable ones are counted as dead-lettered. */
export class RpcServerMetrics {
  private readonly commands: Counter<'pattern' | 'outcome'>;
  private readonly duration: Histogram<'pattern' | 'outcome'>;

  constructor(registry: Registry) {
    this.commands = new Counter({
      name: `${METRIC_PREFIX}rpc_server_commands_total`,
      help: 'RPC commands consumed, by pattern and outcome (dead_lettered: unparseable, pattern "unparseable")',
      labelNames: ['pattern', 'outcome'],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: `${METRIC_PREFIX}rpc_server_duration_seconds`,
      help: 'Time to handle an RPC command (transaction included), by pattern and outcome',
      labelNames: ['pattern', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  handled(pattern: string, outcome: RpcCommandOutcome, seconds: number): void {
    this.commands.inc({ pattern, outcome });
    this.duration.observe({ pattern, outcome }, seconds);
  }

  deadLettered(): void {
    this.commands.inc({ pattern: 'unparseable', outcome: 'dead_lettered' });
  }
}
