import { execFileSync } from 'node:child_process';

export interface QueueState {
  ready: number;
  unacked: number;
  consumers: number;
}

/**
 * Ready and unacknowledged messages and consumers of a queue of the run's vhost, as the broker
 * sees them (checkQueue does not show unacknowledged ones).
 */
export function queueState(queue: string): QueueState {
  const output = execFileSync(
    'rabbitmqctl',
    [
      '-q',
      'list_queues',
      '-p',
      process.env.TEST_RUN_ID!,
      'name',
      'messages_ready',
      'messages_unacknowledged',
      'consumers',
      '--no-table-headers',
    ],
    { encoding: 'utf8' },
  );
  for (const line of output.trim().split('\n')) {
    const [name, ready, unacked, consumers] = line.trim().split(/\s+/);
    if (name === queue)
      return { ready: Number(ready), unacked: Number(unacked), consumers: Number(consumers) };
  }
  throw new Error(`queue ${queue} not found in:\n${output}`);
}
