import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { databaseSchema, loadConfig } from '@app/config';
import { parsePlan, PLAN_NAMES, PLANS } from '@app/dialects';
import { createLogger } from '@app/observability';
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

class UsageError extends Error {}

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

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function run(command: string | undefined, options: Record<string, string | undefined>, accounts: AccountsRepository) {
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
      return print({ keyId, revoked: true });
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: { name: { type: 'string' }, plan: { type: 'string' }, account: { type: 'string' }, 'key-id': { type: 'string' } },
  });
  const config = loadConfig({ ...databaseSchema, LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('warn') });
  const logger = createLogger('cli', config.LOG_LEVEL);
  await migrateGateway(config, logger);
  const db = new DataSource(gatewayDataSourceOptions({ ...config, DATABASE_POOL_SIZE: 2 }));
  await db.initialize();
  try {
    await run(positionals[0], values, new AccountsRepository(db));
    return 0;
  } finally {
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`error: ${error.message}\n${error instanceof UsageError ? `${USAGE}\n` : ''}`);
    process.exit(1);
  },
);
