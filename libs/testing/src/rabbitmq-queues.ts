import { execFileSync } from 'node:child_process';
import { eventually } from './eventually';

export interface QueueState {
  ready: number;
  unacked: number;
  consumers: number;
}

/** rabbitmqctl on the run's vhost; what it printed. */
export function rabbitmqctl(...args: string[]): string {
  return execFileSync('rabbitmqctl', ['-q', ...args, '-p', process.env.TEST_RUN_ID!], { encoding: 'utf8' });
}

/** A `list_*` command of rabbitmqctl on the run's vhost: the fields of each line. */
export function rabbitmqList(command: string, ...fields: string[]): string[][] {
  return rabbitmqctl(command, ...fields, '--no-table-headers')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => line.split('\t'));
}

/**
 * Ready and unacknowledged messages and consumers of a queue of the run's vhost, as the broker
 * sees them (checkQueue does not show unacknowledged ones).
 */
export function queueState(queue: string): QueueState {
  const rows = rabbitmqList('list_queues', 'name', 'messages_ready', 'messages_unacknowledged', 'consumers');
  for (const [name, ready, unacked, consumers] of rows) {
    if (name === queue)
      return { ready: Number(ready), unacked: Number(unacked), consumers: Number(consumers) };
  }
  throw new Error(`queue ${queue} not found in:\n${rows.map((row) => row.join(' ')).join('\n')}`);
}

/** Waits (up to `timeoutMs`) until the broker shows `expected` for a queue of the run's vhost. */
export async function expectQueueState(
  queue: string,
  expected: QueueState,
  timeoutMs = 15_000,
): Promise<void> {
  await eventually(
    () => {
      expect(queueState(queue)).toEqual(expected);
      return true;
    },
    timeoutMs,
    250,
  );
}
