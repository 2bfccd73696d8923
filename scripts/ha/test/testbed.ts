import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const SCRIPTS = path.resolve(__dirname, '..');

/** A value of scripts/ha/env.sh, so the ports and paths are written down once. */
function setting(expression: string): string {
  return execFileSync('bash', ['-c', `source ${SCRIPTS}/env.sh && echo ${expression}`], {
    encoding: 'utf8',
  }).trim();
}

export const HA_TESTBED = {
  amqpUrl: setting('$HA_AMQP_URL'),
  databaseUrl: setting('$HA_DATABASE_URL'),
  sentinels: setting('$HA_REDIS_SENTINELS'),
  sentinelName: setting('$HA_SENTINEL_NAME'),
};

const state = setting('$HA_STATE');
const pidOf = (name: string) => Number(readFileSync(`${state}/pids/${name}`, 'utf8').trim());

function sigkill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Starts again what a fault killed (ha:up keeps what runs), so the next fault meets a whole cluster. */
export function restoreTestbed(): void {
  execFileSync('bash', [`${SCRIPTS}/up.sh`], { stdio: 'ignore', timeout: 240_000 });
}

/** The RabbitMQ node leading the run's `queue` (a quorum queue has one leader and two followers). */
export function rabbitLeaderOf(vhost: string, queue: string): string {
  const rows = JSON.parse(
    execFileSync(
      `${SCRIPTS}/rabbitmqctl.sh`,
      ['-q', 'list_queues', '-p', vhost, 'name', 'leader', '--formatter', 'json'],
      { encoding: 'utf8' },
    ),
  ) as Array<{ name: string; leader: string }>;
  const row = rows.find((candidate) => candidate.name === queue);
  if (!row) throw new Error(`no queue ${queue} in ${vhost}`);
  return row.leader;
}

/** SIGKILLs the Erlang VM of a RabbitMQ node of the testbed. */
export function killRabbitNode(node: string): void {
  const index = setting('${HA_RABBIT_NODES[@]}').split(' ').indexOf(node);
  if (index < 0) throw new Error(`${node} is not a testbed node`);
  sigkill(pidOf(`rabbit-${index}`));
}

/** SIGKILLs the Patroni leader: patroni and its postmaster, as if the machine died. Returns its name. */
export function killPatroniLeader(): string {
  const ports = setting('${HA_PATRONI_PORTS[@]}').split(' ');
  for (const [index, port] of ports.entries()) {
    try {
      execFileSync('curl', ['-sf', '-o', '/dev/null', `http://127.0.0.1:${port}/primary`]);
    } catch {
      continue;
    }
    const postmaster = Number(
      readFileSync(`${state}/patroni/pg${index}/data/postmaster.pid`, 'utf8').split('\n')[0],
    );
    sigkill(pidOf(`patroni-${index}`));
    sigkill(postmaster);
    return `pg${index}`;
  }
  throw new Error('no Patroni leader');
}

/** SIGKILLs the Redis primary the Sentinels name. Returns its port. */
export function killRedisPrimary(): number {
  const [, port] = execFileSync(
    'redis-cli',
    [
      '-p',
      setting('${HA_SENTINEL_PORTS[0]}'),
      'sentinel',
      'get-master-addr-by-name',
      HA_TESTBED.sentinelName,
    ],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
  sigkill(pidOf(`redis-${port}`));
  return Number(port);
}
