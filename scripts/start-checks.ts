import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Replica } from './replicas';

/**
 * What stops a replica from listening, found before any starts: a port another process holds
 * (often an `npm start` still running in another terminal). Otherwise the replica would fail
 * only after its start-up, and a gateway's readiness check could be answered by the other one.
 */
export async function portsTaken(replicas: Replica[]): Promise<string[]> {
  const problems = await Promise.all(
    replicas.flatMap((replica) =>
      Object.entries(replica.env)
        .filter(([variable, value]) => (variable === 'PORT' || variable === 'OPS_PORT') && value !== '0')
        .map(async ([variable, value]) => {
          if (await canListen(Number(value))) return undefined;
          // Loaded only now: @app/runtime brings the services' libraries, too heavy for every start.
          const { portInUseMessage } = await import('@app/runtime');
          // The supervisor gives each service its own ops port; OPS_PORT=0 makes them free ones.
          const remedy =
            variable === 'PORT'
              ? 'set PORT to a free port'
              : 'set OPS_PORT=0 (each service then takes a free port)';
          return `${replica.name}: ${portInUseMessage(Number(value), remedy)}`;
        }),
    ),
  );
  return problems.filter((problem): problem is string => problem !== undefined);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ port, host: '0.0.0.0', exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

/**
 * Waits until each gateway replica answers `/health/live`, then says where the API and its
 * reference are, so that whoever ran `npm start` knows when and where to send a first request.
 * Gives up silently after `timeoutMs` or when `stopped()` (a service that fails says why itself);
 * replicas on a port of the system's choosing (PORT=0) are not announced.
 */
export async function announceGatewaysWhenReady(
  replicas: Replica[],
  log: (line: string) => void,
  stopped: () => boolean,
  { timeoutMs = 300_000, intervalMs = 250 } = {},
): Promise<void> {
  const gateways = replicas.filter((replica) => replica.service === 'gateway' && replica.env.PORT !== '0');
  await Promise.all(
    gateways.map(async (gateway) => {
      const base = `http://127.0.0.1:${gateway.env.PORT}`;
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && !stopped()) {
        const live = await fetch(`${base}/health/live`, { signal: AbortSignal.timeout(2000) }).then(
          (response) => response.ok,
          () => false,
        );
        if (live) {
          log(`${gateway.name} ready: API ${base}/v1, reference and "Try it out" at ${base}/docs`);
          return;
        }
        await sleep(intervalMs);
      }
    }),
  );
}
