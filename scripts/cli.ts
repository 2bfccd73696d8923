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
 * `cms`: account administration (DESIGN.md, Running). stdout carries only the commands' JSON (one
 * document, or one per line for lists); errors are one line on stderr. Exit codes: 0 done, 1 the
 * command failed (no such account or key, a database error), 2 the command line is wrong.
 */

/** A mistake in the command line: exit code 2. */
export class UsageError extends Error {}

type Options = Record<string, string | boolean | undefined>;

interface Context {
  accounts: AccountsRepository;
  print: (value: unknown) => void;
  announce: (change: AccountChange) => Promise<void>;
}

interface Command {
  usage: string;
  summary: string;
  run(options: Options, context: Context): Promise<void>;
}

const PLAN_HELP = `PLAN is trial, pro or business, in any rendering (${Object.values(PLAN_NAMES).flat().join(', ')}).`;

function required(options: Options, flag: string): string {
  const value = options[flag];
  if (typeof value !== 'string' || !value.trim()) throw new UsageError(`--${flag} is required`);
  return value.trim();
}

function plan(options: Options) {
  const text = required(options, 'plan');
  const parsed = parsePlan(text);
  if (!parsed) throw new UsageError(`unknown plan "${text}"; use one of ${PLANS.join(', ')}`);
  return parsed;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function accountId(options: Options): string {
  const id = required(options, 'account');
  if (!UUID.test(id)) throw new UsageError(`--account must be an account id (a UUID), got "${id}"`);
  return id;
}

async function existingAccount(options: Options, { accounts }: Context): Promise<string> {
  const id = accountId(options);
  if (!(await accounts.accountExists(id))) throw new Error(`no account ${id}`);
  return id;
}

export const COMMANDS: Record<string, Command> = {
  'accounts:create': {
    usage: 'accounts:create --name NAME --plan PLAN',
    summary: 'Create an account and its first API key: {"accountId", "keyId", "apiKey"}.',
    async run(options, { accounts, print }) {
      const account = await accounts.createAccount(required(options, 'name'), plan(options));
      const key = await accounts.createKey(account.id);
      print({ accountId: account.id, keyId: key.keyId, apiKey: key.apiKey });
    },
  },
  'accounts:list': {
    usage: 'accounts:list',
    summary: 'Every account, one JSON line each: {"id", "name", "plan", "created_at"}.',
    async run(_options, { accounts, print }) {
      for (const account of await accounts.listAccounts()) print(account);
    },
  },
  'accounts:set-plan': {
    usage: 'accounts:set-plan --account ID --plan PLAN',
    summary: "Change an account's plan; the next request is limited by it.",
    async run(options, { accounts, print, announce }) {
      const id = accountId(options);
      const newPlan = plan(options);
      if (!(await accounts.setPlan(id, newPlan))) throw new Error(`no account ${id}`);
      await announce({ accountId: id, plan: newPlan });
      print({ accountId: id, plan: newPlan });
    },
  },
  'keys:create': {
    usage: 'keys:create --account ID',
    summary: 'Another API key for the account: {"keyId", "apiKey"}. The key is shown only now.',
    async run(options, context) {
      context.print(await context.accounts.createKey(await existingAccount(options, context)));
    },
  },
  'keys:list': {
    usage: 'keys:list --account ID',
    summary:
      'The account\'s keys, one JSON line each: {"keyId", "accountId", "createdAt", "revokedAt"} (never the secret).',
    async run(options, context) {
      for (const key of await context.accounts.listKeys(await existingAccount(options, context)))
        context.print(key);
    },
  },
  'keys:revoke': {
    usage: 'keys:revoke --key-id ID',
    summary:
      'Revoke a key (the id is the part after "cms_" and before the next "_"); every gateway refuses it at once.',
    async run(options, { accounts, print, announce }) {
      const keyId = required(options, 'key-id');
      if (!(await accounts.revokeKey(keyId))) throw new Error(`no active key ${keyId}`);
      await announce({ keyId });
      print({ keyId, revoked: true });
    },
  },
};

export const HELP = `cms: account administration for the Conversation Messaging API

usage: npx cms <command> [options]      (or: npm run -s cli -- <command> [options])

commands:
${Object.values(COMMANDS)
  .map((command) => `  ${command.usage.padEnd(44)}${command.summary}`)
  .join('\n')}

${PLAN_HELP}
Output: JSON on stdout (one document, or one line per item for lists); errors: one line on stderr.
Exit codes: 0 done, 1 the command failed, 2 the command line is wrong.
Environment: DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX (as the services); LOG_LEVEL (default warn).
\`cms <command> --help\` describes one command.`;

const commandHelp = (name: string) =>
  `usage: npx cms ${COMMANDS[name].usage}\n\n${COMMANDS[name].summary}\n${PLAN_HELP}`;

export function parseCliArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      account: { type: 'string' },
      'key-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** Where the CLI writes: JSON on stdout, everything else on stderr. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** The command the line names and its options, or what to print instead (help) or why not (usage). */
function interpret(argv: string[]): { help: string } | { command: Command; options: Options } {
  let parsed: ReturnType<typeof parseCliArgs>;
  try {
    parsed = parseCliArgs(argv);
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]);
  }
  const [name, ...extra] = parsed.positionals;
  if (name === 'help' || (!name && parsed.values.help)) return { help: HELP };
  if (!name) throw new UsageError('no command given');
  if (!COMMANDS[name]) throw new UsageError(`unknown command "${name}"`);
  if (parsed.values.help) return { help: commandHelp(name) };
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return { command: COMMANDS[name], options: parsed.values };
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
    const request = interpret(argv);
    if ('help' in request) {
      output.stdout(`${request.help}\n`);
      return 0;
    }
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
      await request.command.run(request.options, {
        accounts: new AccountsRepository(db),
        print: (value) => output.stdout(`${JSON.stringify(value)}\n`),
        // Tell running gateways at once; if Redis is unreachable their caches expire within seconds.
        announce: (change) =>
          announceAccountChange(config, config.REDIS_KEY_PREFIX, change).catch((error: Error) =>
            output.stderr(
              `warning: gateways not notified (${error.message}); the change applies within AUTH_CACHE_TTL_MS\n`,
            ),
          ),
      });
      return 0;
    } finally {
      await db.destroy();
    }
  } catch (error) {
    const message = (error instanceof Error ? error.message : String(error))
      .trim()
      .replace(/\s*\n\s*/g, '; ');
    if (error instanceof UsageError) {
      output.stderr(`error: ${message} (see: cms --help)\n`);
      return 2;
    }
    output.stderr(`error: ${message}\n`);
    return 1;
  }
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<never> {
  process.exit(await runCli(argv));
}

if (require.main === module) void main();
