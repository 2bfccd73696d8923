import { execFile } from 'node:child_process';
import path from 'node:path';

/**
 * A wrong configuration value stops a real service process at start-up (docs/operations.md):
 * exit code 1 before it connects to anything, and a message on stderr naming the variable. The
 * checks of every variable's values are unit tests (libs/config); this is the process's behaviour.
 */

const ROOT = path.resolve(__dirname, '../../..');

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a service's main.ts as its own process with these variables and waits for it to exit. */
function runService(name: string, env: Record<string, string>): Promise<Exit> {
  const main = path.join(ROOT, 'services', name, 'src', 'main.ts');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', '@swc-node/register', main],
      // Dependencies that do not exist: had the configuration passed, start-up would fail on them instead.
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error.code as number | null) ?? null) : 0, stdout, stderr }),
    );
  });
}

describe('a wrong configuration value stops start-up, naming the variable', () => {
  it.each([
    ['gateway', 'PORT', 'abc'],
    ['gateway', 'RATE_LIMIT_FAIL_MODE', 'maybe'],
    ['conversations', 'OUTBOX_POLL_MS', 'fast'],
    ['webhooks', 'WEBHOOK_RETRY_SCHEDULE', 'x'],
  ])('%s with %s=%j exits 1 and says so on stderr', async (service, variable, value) => {
    const exit = await runService(service, { [variable]: value });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`${service}: Invalid configuration`);
    expect(exit.stderr).toMatch(new RegExp(`^  - ${variable}: .+$`, 'm'));
    expect(exit.stdout).toBe('');
    // Nothing else went wrong or was attempted: the unreachable database was never reached for.
    expect(exit.stderr).not.toMatch(/PostgreSQL|unreachable/i);
  });

  it('every bad variable at once, one line each, and a credential in a URL is not echoed', async () => {
    const exit = await runService('webhooks', {
      WEBHOOK_TIMEOUT_MS: '-5',
      LOG_LEVEL: 'loud',
      AMQP_URL: 'http://admin:hunter2-secret@127.0.0.1',
    });
    expect(exit.code).toBe(1);
    const named = exit.stderr
      .match(/^ {2}- [A-Z_]+(?=:)/gm)
      ?.map((line) => line.slice(4))
      .sort();
    expect(named).toEqual(['AMQP_URL', 'LOG_LEVEL', 'WEBHOOK_TIMEOUT_MS']);
    expect(exit.stderr).not.toContain('hunter2-secret');
  });
});

describe('an unreachable dependency stops start-up, naming it, its address and how to start it', () => {
  it.each([
    [
      'gateway',
      'PostgreSQL',
      'DATABASE_URL',
      'postgres://nobody@127.0.0.1:1/none',
      '127.0.0.1:1',
      'postgres',
    ],
    ['conversations', 'RabbitMQ', 'AMQP_URL', 'amqp://guest:guest@127.0.0.1:2', '127.0.0.1:2', 'rabbitmq'],
    ['gateway', 'Redis', 'REDIS_URL', 'redis://127.0.0.1:3', '127.0.0.1:3', 'redis'],
  ])(
    '%s without %s: exit 1 and one line saying where and how',
    async (service, name, variable, url, address, compose) => {
      const env = { DATABASE_URL: process.env.DATABASE_URL!, [variable]: url };
      const exit = await runService(service, env);
      expect(exit.code).toBe(1);
      const line = exit.stderr.split('\n').find((text) => text.includes(name))!;
      expect(line).toContain(`${service}: ${name} is unreachable at ${address}`);
      expect(line).toContain(`docker compose up -d ${compose}`);
      expect(line).toContain(`set ${variable}`);
      expect(line).not.toMatch(/pg_ctlcluster|\/var\/log/);
    },
  );
});
