import { announceGatewaysWhenReady, portsTaken } from './start-checks';
import { parseReplicaCounts, planReplicas, Replica } from './replicas';
import { Supervisor } from './supervisor';

/**
 * `npm start`: one replica of each service. `npm run start:cluster -- --gateway 2 --conversations 2
 * --webhooks 2`: that many of each, every one on its own port (see planReplicas). SIGTERM or
 * SIGINT stops them all gracefully; see Supervisor for what happens when one exits.
 */
async function main(): Promise<void> {
  let supervisor: Supervisor;
  let replicas: Replica[];
  try {
    replicas = planReplicas(parseReplicaCounts(process.argv.slice(2)), process.env);
    supervisor = new Supervisor(replicas);
  } catch (error) {
    process.stderr.write(`start: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const taken = await portsTaken(replicas);
  if (taken.length > 0) {
    for (const problem of taken) process.stderr.write(`start: ${problem}\n`);
    process.exit(1);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      process.stderr.write(`start: ${signal} received; stopping the services\n`);
      supervisor.stop();
    });
  }
  let done = false;
  void supervisor.run().then((code) => {
    done = true;
    process.exitCode = code;
  });
  void announceGatewaysWhenReady(
    replicas,
    (line) => process.stderr.write(`start: ${line}\n`),
    () => done,
  );
}

void main();
