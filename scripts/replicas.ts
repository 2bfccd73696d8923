import { parseArgs } from 'node:util';

export const SERVICES = ['conversations', 'webhooks', 'gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];
export type ReplicaCounts = Record<ServiceName, number>;

export interface Replica {
  service: ServiceName;
  index: number;
  /** `gateway#0`, `webhooks#1`: how logs name it. */
  name: string;
  /** Variables this replica gets on top of the supervisor's environment. */
  env: Record<string, string>;
}

const MAX_REPLICAS = 32;

/** Where the ops HTTP server (health, metrics) of replica 0 listens; replica i takes base + i. */
const OPS_PORT_BASE: Record<Exclude<ServiceName, 'gateway'>, number> = {
  conversations: 3101,
  webhooks: 3201,
};
const GATEWAY_PORT_BASE = 3000;

/** `--gateway 2 --conversations 3 --webhooks 1`; a service not named runs once. */
export function parseReplicaCounts(argv: string[]): ReplicaCounts {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(SERVICES.map((service) => [service, { type: 'string' }])) as Record<
      ServiceName,
      { type: 'string' }
    >,
    strict: true,
  });
  const counts = {} as ReplicaCounts;
  for (const service of SERVICES) {
    const text = values[service] ?? '1';
    const count = Number(text);
    if (!/^\d+$/.test(text) || count < 1 || count > MAX_REPLICAS) {
      throw new Error(`--${service} must be a whole number from 1 to ${MAX_REPLICAS}, not "${text}"`);
    }
    counts[service] = count;
  }
  return counts;
}

/**
 * Every replica to run, each with its own listening port so that several share one machine:
 * gateway i on PORT + i (PORT defaults to 3000), conversations i on OPS_PORT 3101 + i, webhooks i
 * on OPS_PORT 3201 + i. `PORT=0` or `OPS_PORT=0` in the environment gives every replica a free
 * port of the system's choosing instead.
 */
export function planReplicas(counts: ReplicaCounts, env: NodeJS.ProcessEnv): Replica[] {
  const gatewayBase = env.PORT === undefined ? GATEWAY_PORT_BASE : Number(env.PORT);
  return SERVICES.flatMap((service) =>
    Array.from({ length: counts[service] }, (_, index): Replica => {
      const port = (base: number) => String(base === 0 ? 0 : base + index);
      return {
        service,
        index,
        name: `${service}#${index}`,
        env:
          service === 'gateway'
            ? { PORT: port(gatewayBase) }
            : { OPS_PORT: port(env.OPS_PORT === '0' ? 0 : OPS_PORT_BASE[service]) },
      };
    }),
  );
}
