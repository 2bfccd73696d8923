import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { databaseSchema, loadConfig, redisSchema } from '@app/config';
import { parsePlan, PLAN_NAMES, PLANS } from '@app/dialects';
import { createLogger } from '@app/observability';
import { AccountChange, announceAccountChange } from '../services/gateway/src/accounts/account-changes';
import { AccountsRepository } from '../services/gateway/src/accounts/accounts.repository';
import { gatewayDataSourceOptions } from '../services/gateway/src/data-source';
import { migrateGateway } from '../services/gateway/src/gateway-service';

/**
 * Account administration (DESIGN.md, Running). Each command prints JSON lines on stdout and
 * nothing else; logs and errors go to stderr; a failure exits 1.
 */
const USAGE = `usage: npm run cli -- <command> [options]
  accounts:create --name NAME --plan PLAN   create an account and its first API key
  accounts:list                             one JSON line per account
  accounts:set-plan --account ID --plan PLAN
  keys:create --account ID                  another API key for an account
  keys:revoke --key-id ID
PLAN: trial, pro or business, in any rendering (${Object.values(PLAN_NAMES).flat().join(', ')})`;

/** A mistake in the command line: reported with the usage text. */
export class UsageError extends Error {}

function required(value: string | undefined, flag: string): string {
  if (!value || !value.trim()) throw new UsageError(`--${flag} is required`);
  return value.trim();
}

function plan(value: string | undefined) {
  const parsed = parsePlan(required(value, 'plan'));
  if (!parsed) throw new UsageError(`unknown plan "${value}"; use one of ${PLANS.join(', ')}`);
  return parsed;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function accountId(value: string | undefined): string {
  const id = required(value, 'account');
  if (!UUID.test(id)) throw new UsageError(`--account must be an account id (a UUID), got "${id}"`);
  return id;
}

/** Where the CLI writes: JSON lines on stdout, everything else on stderr. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Runs one parsed command against the accounts repository; `print` emits one JSON line per value. */
export async function runCommand(
  command: string | undefined,
  options: Record<string, string | undefined>,
  accounts: AccountsRepository,
  print: (value: unknown) => void,
  announce: (change: AccountChange) => Promise<void> = async () => undefined,
): Promise<void> {
  switch (command) {
    case 'accounts:create': {
      const account = await accounts.createAccount(required(options.name, 'name'), plan(options.plan));
      const key = await accounts.createKey(account.id);
      return print({ accountId: account.id, keyId: key.keyId, apiKey: key.apiKey });
    }
    case 'accounts:list':
      for (const account of await accounts.listAccounts()) print(account);
      return;
    case 'accounts:set-plan': {
      const id = accountId(options.account);
      const newPlan = plan(options.plan);
      if (!(await accounts.setPlan(id, newPlan))) throw new Error(`no account ${id}`);
      await announce({ accountId: id, plan: newPlan });
      return print({ accountId: id, plan: newPlan });
    }
    case 'keys:create': {
      const id = accountId(options.account);
      if (!(await accounts.accountExists(id))) throw new Error(`no account ${id}`);
      return print(await accounts.createKey(id));
    }
    case 'keys:revoke': {
      const keyId = required(options['key-id'], 'key-id');
      if (!(await accounts.revokeKey(keyId))) throw new Error(`no active key ${keyId}`);
      await announce({ keyId });
      return print({ keyId, revoked: true });
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

export function parseCliArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      account: { type: 'string' },
      'key-id': { type: 'string' },
    },
  });
}

/**
 * The whole CLI for one command line (without `node cli.js`): migrates the gateway schema, runs
 * the command and returns the exit code. Errors are reported on stderr, never thrown.
 */
export async function runCli(
  argv: string[],
  output: CliOutput = processOutput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  try {
    const { positionals, values } = parseCliArgs(argv);
    const config = loadConfig(
      {
        ...databaseSchema,
        ...redisSchema,
        LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('warn'),
      },
      env,
    );
    const logger = createLogger('cli', config.LOG_LEVEL);
    await migrateGateway(config, logger);
    const db = new DataSource(gatewayDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }));
    await db.initialize();
    try {
      // Tell running gateways at once; if Redis is unreachable their caches expire within seconds.
      const announce = (change: AccountChange) =>
        announceAccountChange(config.REDIS_URL, config.REDIS_KEY_PREFIX, change).catch((error: Error) =>
          output.stderr(
            `warning: gateways not notified (${error.message}); the change applies within AUTH_CACHE_TTL_MS\n`,
          ),
        );
      await runCommand(
        positionals[0],
        values,
        new AccountsRepository(db),
        (value) => output.stdout(`${JSON.stringify(value)}\n`),
        announce,
      );
      return 0;
    } finally {
      await db.destroy();
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.stderr(`error: ${message}\n${error instanceof UsageError ? `${USAGE}\n` : ''}`);
    return 1;
  }
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<never> {
  process.exit(await runCli(argv));
}

if (require.main === module) void main();
