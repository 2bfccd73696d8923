import { execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The fault tests' gateway and load run in the test's own process: whatever a fault does after the
 * load started must not block its event loop (a synchronous child process held requests in flight
 * long enough to be shed as `503 overloaded`). So child processes are awaited, and every setting is
 * read once, when this module loads.
 */
const run = promisify(execFile);

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
const RABBIT_NODES = setting('${HA_RABBIT_NODES[@]}').split(' ');
const PATRONI_PORTS = setting('${HA_PATRONI_PORTS[@]}').split(' ');
const SENTINEL_PORTS = setting('${HA_SENTINEL_PORTS[@]}').split(' ');
const REDIS_PORTS = [setting('$HA_REDIS_PRIMARY_PORT'), setting('$HA_REDIS_REPLICA_PORT')];
const pidOf = (name: string) => Number(readFileSync(`${state}/pids/${name}`, 'utf8').trim());

function sigkill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Bound on getting back what a fault killed: a RabbitMQ node boots again, a Patroni node rejoins
 * with pg_rewind (tens of seconds on a loaded 2-core machine).
 */
export const RESTORE_TIMEOUT_MS = 180_000;

/**
 * Starts again what a fault killed (ha:up keeps what runs, and checks nothing more on it), so the
 * next fault meets a whole cluster. Does not block the test's event loop (the gateway and load
 * run in it); a node not back within RESTORE_TIMEOUT_MS fails with what up.sh said.
 */
export async function restoreTestbed(): Promise<void> {
  const child = spawn('bash', [`${SCRIPTS}/up.sh`], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-6000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // up.sh and its waits are one process group.
    sigkill(-child.pid!);
  }, RESTORE_TIMEOUT_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  child.stdout.destroy();
  child.stderr.destroy();
  if (code === 0 && !timedOut) return;
  const down = deadNodes();
  throw new Error(
    `The HA testbed was not whole again ${
      timedOut ? `within ${RESTORE_TIMEOUT_MS / 1000} s` : `(up.sh exited ${code})`
    }; down: ${down.length ? down.join(', ') : 'none by their pid files'}. up.sh said:\n${output}`,
  );
}

/** The testbed's processes whose pid file names no live process. */
function deadNodes(): string[] {
  return readdirSync(`${state}/pids`).filter((name) => {
    try {
      process.kill(pidOf(name), 0);
      return false;
    } catch {
      return true;
    }
  });
}

/** The RabbitMQ node leading the run's `queue` (a quorum queue has one leader and two followers). */
export async function rabbitLeaderOf(vhost: string, queue: string): Promise<string> {
  const { stdout } = await run(`${SCRIPTS}/rabbitmqctl.sh`, [
    '-q',
    'list_queues',
    '-p',
    vhost,
    'name',
    'leader',
    '--formatter',
    'json',
  ]);
  const rows = JSON.parse(stdout) as Array<{ name: string; leader: string }>;
  const row = rows.find((candidate) => candidate.name === queue);
  if (!row) throw new Error(`no queue ${queue} in ${vhost}`);
  return row.leader;
}

/** SIGKILLs the Erlang VM of a RabbitMQ node of the testbed. */
export function killRabbitNode(node: string): void {
  const index = RABBIT_NODES.indexOf(node);
  if (index < 0) throw new Error(`${node} is not a testbed node`);
  sigkill(pidOf(`rabbit-${index}`));
}

/** SIGKILLs the Patroni leader: patroni and its postmaster, as if the machine died. Returns its name. */
export async function killPatroniLeader(): Promise<string> {
  for (const [index, port] of PATRONI_PORTS.entries()) {
    try {
      await run('curl', ['-sf', '-o', '/dev/null', `http://127.0.0.1:${port}/primary`]);
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

/** What each Sentinel names as primary and what each Redis node says it is, for a failure's message. */
export function redisRoles(): string {
  const ask = (port: string, ...command: string[]) => {
    try {
      return execFileSync('redis-cli', ['-p', port, ...command], { encoding: 'utf8', timeout: 2000 })
        .trim()
        .replace(/\s+/g, ' ');
    } catch (error) {
      return `unreachable (${(error as Error).message.split('\n')[0]})`;
    }
  };
  return [
    ...SENTINEL_PORTS.map(
      (port) =>
        `sentinel ${port}: ${ask(port, 'sentinel', 'get-master-addr-by-name', HA_TESTBED.sentinelName)}`,
    ),
    ...REDIS_PORTS.map((port) => `redis ${port}: ${ask(port, 'role')}`),
  ].join('\n');
}

/** SIGKILLs the Redis primary the Sentinels name. Returns its port. */
export async function killRedisPrimary(): Promise<number> {
  const { stdout } = await run('redis-cli', [
    '-p',
    SENTINEL_PORTS[0],
    'sentinel',
    'get-master-addr-by-name',
    HA_TESTBED.sentinelName,
  ]);
  const [, port] = stdout.trim().split('\n');
  sigkill(pidOf(`redis-${port}`));
  return Number(port);
}
