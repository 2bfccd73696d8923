import { parseReplicaCounts, planReplicas } from './replicas';
import { Supervisor } from './supervisor';

/**
 * `npm start`: one replica of each service. `npm run start:cluster -- --gateway 2 --conversations 2
 * --webhooks 2`: that many of each, every one on its own port (see planReplicas). SIGTERM or
 * SIGINT stops them all gracefully; see Supervisor for what happens when one exits.
 */
function main(): void {
  let supervisor: Supervisor;
  try {
    supervisor = new Supervisor(planReplicas(parseReplicaCounts(process.argv.slice(2)), process.env));
  } catch (error) {
    process.stderr.write(`start: ${(error as Error).message}\n`);
    process.exit(2);
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      process.stderr.write(`start: ${signal} received; stopping the services\n`);
      supervisor.stop();
    });
  }
  void supervisor.run().then((code) => {
    process.exitCode = code;
  });
}

main();
