import { parseArgs } from 'node:util';
import { parsePlan, PLAN_NAMES, PLANS } from '@app/dialects';
import { parseScopes, SCOPES } from '../services/gateway/src/accounts/scopes';
import type { AccountChange } from '../services/gateway/src/accounts/account-changes';
import type { CliOutput, CommandContext } from './cli-context';
import { listen, parseEventTypes } from './cli/listen';

/**
 * `cms`: account administration (README.md, "Accounts and keys"). stdout carries only the commands' JSON (one
 * document, or one per line for lists); errors are one line on stderr. Exit codes: 0 done, 1 the
 * command failed (no such account or key, a database error), 2 the command line is wrong.
 */

/** A mistake in the command line: exit code 2. */
export class UsageError extends Error {}

type Options = Record<string, string | boolean | undefined>;

interface Command {
  usage: string;
  summary: string;
  run(options: Options, context: CommandContext): Promise<void>;
}

/** What a command that works through the API (not the database) gets: its output and a stop signal. */
interface ApiCommandContext {
  output: CliOutput;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT or SIGTERM: the command ends and the CLI exits 0. */
  signal: AbortSignal;
}

interface ApiCommand {
  usage: string;
  summary: string;
  runWithApi(options: Options, context: ApiCommandContext): Promise<void>;
}

const SCOPE_HELP = `S is a scope: ${SCOPES.join(', ')} (README.md, "Keys and scopes").`;
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

/** `--scopes`, comma-separated; every scope when absent (`required`: the option must be given). */
function scopes(options: Options, { optional }: { optional: boolean }) {
  if (optional && options.scopes === undefined) return SCOPES;
  const parsed = parseScopes(required(options, 'scopes'));
  if ('problem' in parsed) throw new UsageError(`--scopes: ${parsed.problem}`);
  return parsed.scopes;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function accountId(options: Options): string {
  const id = required(options, 'account');
  if (!UUID.test(id)) throw new UsageError(`--account must be an account id (a UUID), got "${id}"`);
  return id;
}

/**
 * A change every gateway applies at once: made, announced to them, then printed; `missing` is the
 * error when it matched no account or active key.
 */
async function announced(
  made: Promise<boolean>,
  missing: string,
  change: AccountChange,
  output: object,
  { announce, print }: CommandContext,
): Promise<void> {
  if (!(await made)) throw new Error(missing);
  await announce(change);
  print(output);
}

/** A command that changes the active key --key-id names: `change` makes it and says what to print. */
function keyChange(
  change: (
    keyId: string,
    options: Options,
    context: CommandContext,
  ) => { made: Promise<boolean>; output: object },
): Command['run'] {
  return async (options, context) => {
    const keyId = required(options, 'key-id');
    const { made, output } = change(keyId, options, context);
    await announced(made, `no active key ${keyId}`, { keyId }, output, context);
  };
}

async function existingAccount(options: Options, { accounts }: CommandContext): Promise<string> {
  const id = accountId(options);
  if (!(await accounts.accountExists(id))) throw new Error(`no account ${id}`);
  return id;
}

function url(options: Options, flag: string, fallback?: string): string {
  const text = options[flag] === undefined && fallback !== undefined ? fallback : required(options, flag);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new UsageError(`--${flag} must be a URL, got "${text}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`--${flag} must be an http or https URL, got "${text}"`);
  return text.replace(/\/+$/, '');
}

const DEFAULT_API_URL = 'http://127.0.0.1:3000';

export const API_COMMANDS: Record<string, ApiCommand> = {
  listen: {
    usage: 'listen --api-key KEY --forward-to URL [--api-url URL] [--events T,T] [--since ISO]',
    summary: `Forward the account's events to URL as signed webhooks until stopped (Ctrl-C). The first line is {"secret"} to verify them with; then one line per event: {"id", "type", "status"} or {"id", "type", "error"}. --api-url defaults to ${DEFAULT_API_URL}; --events names types in any dialect (default: all); --since first forwards the stored events since then, oldest first.`,
    async runWithApi(options, { output, signal }) {
      const types = options.events === undefined ? undefined : parseEventTypes(required(options, 'events'));
      if (types && 'problem' in types) throw new UsageError(`--events: ${types.problem}`);
      let since: Date | undefined;
      if (options.since !== undefined) {
        since = new Date(required(options, 'since'));
        if (Number.isNaN(since.getTime())) throw new UsageError('--since must be an ISO 8601 date-time');
      }
      await listen(
        {
          apiKey: required(options, 'api-key'),
          forwardTo: url(options, 'forward-to'),
          apiUrl: url(options, 'api-url', DEFAULT_API_URL),
          events: types,
          since,
        },
        {
          print: (value) => output.stdout(`${JSON.stringify(value)}\n`),
          note: (text) => output.stderr(`${text}\n`),
        },
        signal,
      );
    },
  },
};

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
    async run(options, context) {
      const change = { accountId: accountId(options), plan: plan(options) };
      const made = context.accounts.setPlan(change.accountId, change.plan);
      await announced(made, `no account ${change.accountId}`, change, change, context);
    },
  },
  'keys:create': {
    usage: 'keys:create --account ID [--scopes S,S]',
    summary:
      'Another API key for the account: {"keyId", "apiKey", "scopes"}, every scope unless --scopes restricts it. The key is shown only now.',
    async run(options, context) {
      const restrictedTo = scopes(options, { optional: true });
      context.print(await context.accounts.createKey(await existingAccount(options, context), restrictedTo));
    },
  },
  'keys:list': {
    usage: 'keys:list --account ID',
    summary:
      'The account\'s keys, one JSON line each: {"keyId", "accountId", "scopes", "createdAt", "revokedAt"} (never the secret).',
    async run(options, context) {
      for (const key of await context.accounts.listKeys(await existingAccount(options, context)))
        context.print(key);
    },
  },
  'keys:revoke': {
    usage: 'keys:revoke --key-id ID',
    summary:
      'Revoke a key (the id is the part after "cms_" and before the next "_"); every gateway refuses it at once.',
    run: keyChange((keyId, _options, { accounts }) => ({
      made: accounts.revokeKey(keyId),
      output: { keyId, revoked: true },
    })),
  },
  'keys:set-scopes': {
    usage: 'keys:set-scopes --key-id ID --scopes S,S',
    summary:
      'Replace a key\'s scopes: {"keyId", "scopes"}; every gateway applies them at once, as a revocation.',
    run: keyChange((keyId, options, { accounts }) => {
      const newScopes = scopes(options, { optional: false });
      return { made: accounts.setScopes(keyId, newScopes), output: { keyId, scopes: newScopes } };
    }),
  },
  'secrets:reencrypt': {
    usage: 'secrets:reencrypt',
    summary:
      'Move every webhook signing secret to the first key of SECRETS_ENCRYPTION_KEYS: {"subscriptions", "replies"} re-encrypted. Safe while serving; run again to resume.',
    async run(_options, { reencryptSecrets, print }) {
      print(await reencryptSecrets());
    },
  },
};

export const HELP = `cms: account administration for the Conversation Messaging API

usage: npx cms <command> [options]      (or: npm run -s cli -- <command> [options])

commands:
${[...Object.values(COMMANDS), ...Object.values(API_COMMANDS)]
  .map((command) => `  ${command.usage.padEnd(44)}${command.summary}`)
  .join('\n')}

${PLAN_HELP}
${SCOPE_HELP}
Output: JSON on stdout (one document, or one line per item for lists); errors: one line on stderr.
Exit codes: 0 done, 1 the command failed, 2 the command line is wrong.
Environment: DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, SECRETS_ENCRYPTION_KEYS (as the services);
LOG_LEVEL (default warn).
\`cms <command> --help\` describes one command.`;

const commandHelp = (name: string) => {
  const command = COMMANDS[name] ?? API_COMMANDS[name];
  return `usage: npx cms ${command.usage}\n\n${command.summary}\n${PLAN_HELP}\n${SCOPE_HELP}`;
};

export function parseCliArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      account: { type: 'string' },
      'key-id': { type: 'string' },
      scopes: { type: 'string' },
      'api-key': { type: 'string' },
      'api-url': { type: 'string' },
      'forward-to': { type: 'string' },
      events: { type: 'string' },
      since: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

const processOutput: CliOutput = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** The command the line names and its options, or what to print instead (help) or why not (usage). */
function interpret(
  argv: string[],
): { help: string } | { command: Command; options: Options } | { apiCommand: ApiCommand; options: Options } {
  let parsed: ReturnType<typeof parseCliArgs>;
  try {
    parsed = parseCliArgs(argv);
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0]);
  }
  const [name, ...extra] = parsed.positionals;
  if (name === 'help' || (!name && parsed.values.help)) return { help: HELP };
  if (!name) throw new UsageError('no command given');
  if (!COMMANDS[name] && !API_COMMANDS[name]) throw new UsageError(`unknown command "${name}"`);
  if (parsed.values.help) return { help: commandHelp(name) };
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  if (API_COMMANDS[name]) return { apiCommand: API_COMMANDS[name], options: parsed.values };
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
  signal: AbortSignal = new AbortController().signal,
): Promise<number> {
  try {
    const request = interpret(argv);
    if ('help' in request) {
      output.stdout(`${request.help}\n`);
      return 0;
    }
    if ('apiCommand' in request) {
      await request.apiCommand.runWithApi(request.options, { output, env, signal });
      return 0;
    }
    // The database, Redis and the gateway's code are loaded only for a command, not for help.
    const { withCommandContext } = await import('./cli-context');
    await withCommandContext(env, output, (context) => request.command.run(request.options, context));
    return 0;
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
  // A long-running command (listen) ends cleanly on Ctrl-C or SIGTERM, and when the process that
  // started it ends: npx does not pass SIGTERM on, so `kill` of `npx cms listen` stops it this way.
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && stop.abort(), 500).unref();
  // Whatever it was waiting for (a hanging API), it is gone a second later.
  stop.signal.addEventListener('abort', () => setTimeout(() => process.exit(0), 1000).unref());
  process.exit(await runCli(argv, processOutput, process.env, stop.signal));
}

if (require.main === module) void main();
