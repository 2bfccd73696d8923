import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually, TestStack } from '@app/testing';
import { SCOPES } from '../services/gateway/src/accounts/scopes';
import { runCli } from './cli';

/**
 * The account CLI (README.md, "Accounts and keys"): `accounts:create`, `accounts:list`, `accounts:set-plan`,
 * `keys:create`, `keys:revoke`. Only JSON lines on stdout; errors on stderr with exit code 1.
 * Runs against the run's own database (DATABASE_URL from the Jest global setup); the keys it
 * prints are checked against a real gateway.
 */

const AUTH_CACHE_TTL_MS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const API_KEY = /^cms_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;
const SEE_HELP = ' (see: cms --help)\n';

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(
    argv,
    { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    { ...process.env, LOG_LEVEL: 'warn' },
  );
  return { code, stdout, stderr };
}

/** The run succeeded and printed exactly one JSON line, nothing on stderr. */
function oneJsonLine(run: CliRun): any {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  expect(run.stdout.endsWith('\n')).toBe(true);
  const lines = run.stdout.slice(0, -1).split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]);
}

describe('account CLI', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ gateway: { AUTH_CACHE_TTL_MS: String(AUTH_CACHE_TTL_MS) } });
  });
  afterAll(() => stack?.close());

  const accountRow = async (id: string) =>
    (await stack.query(`SELECT id, name, plan FROM gateway.accounts WHERE id = $1`, [id]))[0];
  const keyRows = async (accountId: string) =>
    stack.query(
      `SELECT id, secret_hash, revoked_at FROM gateway.api_keys WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
  const counts = async () =>
    (
      await stack.query(
        `SELECT (SELECT count(*)::int FROM gateway.accounts) AS accounts, (SELECT count(*)::int FROM gateway.api_keys) AS keys,
                (SELECT count(*)::int FROM gateway.api_keys WHERE revoked_at IS NOT NULL) AS revoked`,
      )
    )[0];
  const create = async (name: string, plan: string) => {
    const created = oneJsonLine(await cli('accounts:create', '--name', name, '--plan', plan));
    return created as { accountId: string; keyId: string; apiKey: string };
  };

  describe('accounts:create', () => {
    it.each([
      ['trial', 'trial'],
      ['Percubaan', 'trial'],
      ['Wersja próbna', 'trial'],
      ['pro', 'pro'],
      ['business', 'business'],
      ['TRIAL', 'trial'],
      ['percubaan', 'trial'],
      ['  wersja   PRÓBNA ', 'trial'],
      ['Wersja pro\u0301bna', 'trial'], // decomposed ó (NFD), as some keyboards and shells produce it
      ['Business', 'business'],
    ])('--plan %j creates a %s account and a working key', async (planArg, plan) => {
      const before = await counts();
      const name = `Acme ${planArg.trim()}`;
      const created = await create(name, planArg);

      expect(Object.keys(created).sort()).toEqual(['accountId', 'apiKey', 'keyId']);
      expect(created.accountId).toMatch(UUID);
      const match = API_KEY.exec(created.apiKey);
      expect(match).not.toBeNull();
      expect(match![1]).toBe(created.keyId);

      expect(await accountRow(created.accountId)).toEqual({ id: created.accountId, name, plan });
      const keys = await keyRows(created.accountId);
      expect(keys).toHaveLength(1);
      expect(keys[0].id).toBe(created.keyId);
      expect(keys[0].revoked_at).toBeNull();
      // Only a hash of the secret is stored.
      expect(Buffer.from(keys[0].secret_hash).equals(createHash('sha256').update(match![2]).digest())).toBe(
        true,
      );
      expect(Buffer.from(keys[0].secret_hash).toString('utf8')).not.toContain(match![2]);
      expect(await counts()).toEqual({ ...before, accounts: before.accounts + 1, keys: before.keys + 1 });

      const res = await stack.api(created.apiKey).get('/v1/conversations');
      expect(res.status).toBe(200);
      expect(res.body.pagination.total).toBe(0);
    });

    it('keeps any Unicode name, trimmed', async () => {
      const created = await create('  Zażółć gęślą jaźń — Kedai Kopi 株式会社  ', 'pro');
      expect((await accountRow(created.accountId)).name).toBe('Zażółć gęślą jaźń — Kedai Kopi 株式会社');
    });

    it('every account gets its own id and key', async () => {
      const a = await create('Twin', 'pro');
      const b = await create('Twin', 'pro');
      expect(b.accountId).not.toBe(a.accountId);
      expect(b.keyId).not.toBe(a.keyId);
      expect(b.apiKey).not.toBe(a.apiKey);
      const made = await stack.api(a.apiKey).post('/v1/conversations', { subject: 'only in A' });
      expect(made.status).toBe(201);
      expect((await stack.api(b.apiKey).get(`/v1/conversations/${made.body.id}`)).status).toBe(404);
    });
  });

  describe('accounts:list', () => {
    it('prints one JSON line per account, oldest first, with no secrets', async () => {
      const first = await create('Listed one', 'Percubaan');
      const second = await create('Listed two', 'business');
      const run = await cli('accounts:list');
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.stdout.endsWith('\n')).toBe(true);
      expect(run.stdout).not.toContain('cms_');
      const rows = run.stdout
        .slice(0, -1)
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(rows).toHaveLength((await counts()).accounts);
      for (const row of rows) {
        expect(Object.keys(row).sort()).toEqual(['created_at', 'id', 'name', 'plan']);
        expect(row.id).toMatch(UUID);
        expect(['trial', 'pro', 'business']).toContain(row.plan);
        expect(new Date(row.created_at).toISOString()).toBe(row.created_at);
      }
      const sorted = [...rows].sort(
        (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
      );
      expect(rows.map((r) => r.id)).toEqual(sorted.map((r) => r.id));
      expect(rows.find((r) => r.id === first.accountId)).toMatchObject({ name: 'Listed one', plan: 'trial' });
      expect(rows.find((r) => r.id === second.accountId)).toMatchObject({
        name: 'Listed two',
        plan: 'business',
      });
      expect(rows.findIndex((r) => r.id === first.accountId)).toBeLessThan(
        rows.findIndex((r) => r.id === second.accountId),
      );
    });
  });

  describe('accounts:set-plan', () => {
    it.each([
      ['business', 'business'],
      ['pro', 'pro'],
      ['Wersja próbna', 'trial'],
      ['Percubaan', 'trial'],
    ])('--plan %j sets %s and prints it', async (planArg, plan) => {
      const start = plan === 'business' ? 'trial' : 'business';
      const account = await create('Plan change', start);
      const printed = oneJsonLine(
        await cli('accounts:set-plan', '--account', account.accountId, '--plan', planArg),
      );
      expect(printed).toEqual({ accountId: account.accountId, plan });
      expect((await accountRow(account.accountId)).plan).toBe(plan);
      // The account's key keeps working.
      expect((await stack.api(account.apiKey).get('/v1/conversations')).status).toBe(200);
    });

    it('accepts an upper-case account id', async () => {
      const account = await create('Upper', 'trial');
      const printed = oneJsonLine(
        await cli('accounts:set-plan', '--account', account.accountId.toUpperCase(), '--plan', 'pro'),
      );
      expect(printed.plan).toBe('pro');
      expect((await accountRow(account.accountId)).plan).toBe('pro');
    });
  });

  describe('keys', () => {
    it('keys:create prints a new key for the account that sees the same data', async () => {
      const account = await create('Two keys', 'pro');
      const printed = oneJsonLine(await cli('keys:create', '--account', account.accountId));
      expect(Object.keys(printed).sort()).toEqual(['apiKey', 'keyId', 'scopes']);
      // Every scope unless --scopes narrows it.
      expect(printed.scopes).toEqual(SCOPES);
      expect(API_KEY.exec(printed.apiKey)?.[1]).toBe(printed.keyId);
      expect(printed.keyId).not.toBe(account.keyId);
      expect((await keyRows(account.accountId)).map((k: { id: string }) => k.id).sort()).toEqual(
        [account.keyId, printed.keyId].sort(),
      );

      const made = await stack.api(account.apiKey).post('/v1/conversations', { subject: 'shared' });
      expect(made.status).toBe(201);
      const seen = await stack.api(printed.apiKey).get(`/v1/conversations/${made.body.id}`);
      expect(seen.status).toBe(200);
      expect(seen.body.subject).toBe('shared');
    });

    it('keys:revoke revokes exactly that key: it stops authenticating, the others keep working', async () => {
      const account = await create('Revoke', 'pro');
      const spare = oneJsonLine(await cli('keys:create', '--account', account.accountId));
      expect((await stack.api(account.apiKey).get('/v1/conversations')).status).toBe(200);

      const printed = oneJsonLine(await cli('keys:revoke', '--key-id', account.keyId));
      expect(printed).toEqual({ keyId: account.keyId, revoked: true });
      const keys = await keyRows(account.accountId);
      expect(keys.find((k: { id: string }) => k.id === account.keyId).revoked_at).not.toBeNull();
      expect(keys.find((k: { id: string }) => k.id === spare.keyId).revoked_at).toBeNull();

      const refused = await eventually(
        async () => {
          const res = await stack.api(account.apiKey).get('/v1/conversations');
          if (res.status !== 401) throw new Error(`revoked key still answered ${res.status}`);
          return res;
        },
        AUTH_CACHE_TTL_MS + 2_000,
        20,
      );
      expect(refused.body.code).toBe('unauthorized');
      expect((await stack.api(spare.apiKey).get('/v1/conversations')).status).toBe(200);
    });
  });

  describe('errors: exit code 1, a message on stderr, nothing on stdout, nothing changed', () => {
    let existing: { accountId: string; keyId: string; apiKey: string };
    let revokedKeyId: string;
    beforeAll(async () => {
      existing = await create('Existing', 'pro');
      const extra = oneJsonLine(await cli('keys:create', '--account', existing.accountId));
      oneJsonLine(await cli('keys:revoke', '--key-id', extra.keyId));
      revokedKeyId = extra.keyId;
    });

    const unknownId = randomUUID();
    type ErrorCase = [name: string, argv: () => string[], message: RegExp | (() => RegExp), usage: boolean];
    const cases: ErrorCase[] = [
      ['no command', () => [], /^error: no command given /, true],
      ['an unknown command', () => ['accounts:delete'], /^error: unknown command "accounts:delete" /, true],
      ['an extra argument', () => ['accounts:list', 'now'], /^error: unexpected argument "now" /, true],
      [
        'an unknown plan',
        () => ['accounts:create', '--name', 'X', '--plan', 'gold'],
        /^error: unknown plan "gold"; use one of trial, pro, business /,
        true,
      ],
      [
        'a plan in no dialect',
        () => ['accounts:create', '--name', 'X', '--plan', 'Wersja'],
        /^error: unknown plan "Wersja"/,
        true,
      ],
      ['a missing --plan', () => ['accounts:create', '--name', 'X'], /^error: --plan is required /, true],
      [
        'an empty --plan',
        () => ['accounts:create', '--name', 'X', '--plan', ''],
        /^error: --plan is required /,
        true,
      ],
      ['a missing --name', () => ['accounts:create', '--plan', 'pro'], /^error: --name is required /, true],
      [
        'a blank --name',
        () => ['accounts:create', '--name', '   ', '--plan', 'pro'],
        /^error: --name is required /,
        true,
      ],
      [
        '--name without a value',
        () => ['accounts:create', '--plan', 'pro', '--name'],
        /^error: .*--name/,
        true,
      ],
      [
        'an unknown flag',
        () => ['accounts:create', '--name', 'X', '--plan', 'pro', '--owner', 'me'],
        /^error: .*--owner/,
        true,
      ],
      [
        'set-plan without --account',
        () => ['accounts:set-plan', '--plan', 'pro'],
        /^error: --account is required /,
        true,
      ],
      [
        'set-plan with a non-UUID account',
        () => ['accounts:set-plan', '--account', 'acme', '--plan', 'pro'],
        /^error: --account must be an account id \(a UUID\), got "acme" /,
        true,
      ],
      [
        'set-plan with an unknown account',
        () => ['accounts:set-plan', '--account', unknownId, '--plan', 'pro'],
        new RegExp(`^error: no account ${unknownId}\\n$`),
        false,
      ],
      [
        'set-plan with an unknown plan',
        () => ['accounts:set-plan', '--account', existing.accountId, '--plan', 'platinum'],
        /^error: unknown plan "platinum"/,
        true,
      ],
      [
        'set-plan without --plan',
        () => ['accounts:set-plan', '--account', existing.accountId],
        /^error: --plan is required /,
        true,
      ],
      ['keys:create without --account', () => ['keys:create'], /^error: --account is required /, true],
      [
        'keys:create with a non-UUID account',
        () => ['keys:create', '--account', "x' OR '1'='1"],
        /^error: --account must be an account id/,
        true,
      ],
      [
        'keys:create with an unknown account',
        () => ['keys:create', '--account', unknownId],
        new RegExp(`^error: no account ${unknownId}\\n$`),
        false,
      ],
      ['keys:revoke without --key-id', () => ['keys:revoke'], /^error: --key-id is required /, true],
      [
        'keys:revoke with an unknown key',
        () => ['keys:revoke', '--key-id', '0123456789abcdef'],
        /^error: no active key 0123456789abcdef\n$/,
        false,
      ],
      [
        'keys:revoke of a revoked key',
        () => ['keys:revoke', '--key-id', revokedKeyId],
        () => new RegExp(`^error: no active key ${revokedKeyId}\\n$`),
        false,
      ],
    ];

    it.each(cases)('%s', async (_name, argv, message, usage) => {
      const before = await counts();
      const run = await cli(...argv());
      // A wrong command line exits 2, a command that failed 1; either way one line on stderr.
      expect(run.code).toBe(usage ? 2 : 1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(typeof message === 'function' ? message() : message);
      expect(run.stderr.split('\n')).toHaveLength(2);
      expect(run.stderr.endsWith(SEE_HELP)).toBe(usage);
      expect(await counts()).toEqual(before);
      expect((await accountRow(existing.accountId)).plan).toBe('pro');
      expect((await stack.api(existing.apiKey).get('/v1/conversations')).status).toBe(200);
    });

    it('an unreachable database is an error on stderr, not a crash or output', async () => {
      let stdout = '';
      let stderr = '';
      const code = await runCli(
        ['accounts:list'],
        { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) },
        { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
      );
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      expect(stderr).toMatch(/^error: .+/);
    });
  });

  describe('as a process', () => {
    /**
     * `npm run cli` runs the compiled file; here the same entry point runs from source, compiled on
     * the fly by SWC (as Jest does), so the test sees what a shell sees: exit code, stdout, stderr.
     */
    let dir: string;
    let hook: string;
    const root = resolve(__dirname, '..');
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'cli-spec-'));
      hook = join(dir, 'swc-hook.js');
      writeFileSync(
        hook,
        `const { transformSync } = require(${JSON.stringify(require.resolve('@swc/core'))});
const fs = require('fs');
require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(fs.readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      baseUrl: ${JSON.stringify(root)},
      paths: { '@app/*': ['libs/*/src'] },
    },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
`,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const spawnCli = (argv: string[]) =>
      new Promise<CliRun>((done) => {
        execFile(
          process.execPath,
          [
            '-r',
            hook,
            '-e',
            `require(${JSON.stringify(join(root, 'scripts/cli.ts'))}).main(process.argv.slice(1))`,
            ...argv,
          ],
          { cwd: root, env: { ...process.env, LOG_LEVEL: 'debug' }, timeout: 60_000 },
          (error, stdout, stderr) =>
            done({ code: error ? Number((error as NodeJS.ErrnoException).code ?? 1) : 0, stdout, stderr }),
        );
      });

    it('accounts:create prints exactly one JSON line on stdout and exits 0, even at LOG_LEVEL=debug', async () => {
      const run = await spawnCli(['accounts:create', '--name', 'Spawned', '--plan', 'Wersja próbna']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^\{[^\n]*\}\n$/);
      const created = JSON.parse(run.stdout);
      expect(Object.keys(created).sort()).toEqual(['accountId', 'apiKey', 'keyId']);
      expect((await accountRow(created.accountId)).plan).toBe('trial');
      expect((await stack.api(created.apiKey).get('/v1/conversations')).status).toBe(200);
    });

    it('a bad command line exits 2 with one line on stderr and nothing on stdout', async () => {
      const run = await spawnCli(['accounts:create', '--name', 'Spawned', '--plan', 'gold']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(`error: unknown plan "gold"; use one of trial, pro, business${SEE_HELP}`);
    });
  });

  describe('as a user runs it: npx cms, npm run -s cli', () => {
    const run = (command: string, args: string[]) =>
      new Promise<CliRun>((done) => {
        execFile(
          command,
          args,
          { cwd: resolve(__dirname, '..'), env: process.env, timeout: 240_000 },
          (error, stdout, stderr) =>
            done({ code: error ? Number((error as NodeJS.ErrnoException).code ?? 1) : 0, stdout, stderr }),
        );
      });

    // The first run may build the project (its output on stderr): hence the long timeout.
    it('npx cms accounts:create prints one JSON line on stdout and nothing else', async () => {
      const created = await run('npx', [
        '--no-install',
        'cms',
        'accounts:create',
        '--name',
        'Via npx',
        '--plan',
        'pro',
      ]);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/^\{[^\n]*\}\n$/);
      const { apiKey } = JSON.parse(created.stdout);
      expect((await stack.api(apiKey).get('/v1/conversations')).status).toBe(200);
    }, 240_000);

    it('npm run -s cli -- accounts:list prints JSON lines only; a usage error exits 2', async () => {
      const listed = await run('npm', ['run', '-s', 'cli', '--', 'accounts:list']);
      expect(listed.code).toBe(0);
      for (const line of listed.stdout.trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('id');
      const wrong = await run('npm', ['run', '-s', 'cli', '--', 'accounts:create']);
      expect({ code: wrong.code, stdout: wrong.stdout }).toEqual({ code: 2, stdout: '' });
    }, 240_000);
  });

  describe('help', () => {
    it.each([[['--help']], [['-h']], [['help']]])(
      '%j lists every command, on stdout, exit 0',
      async (argv) => {
        const run = await cli(...argv);
        expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
        for (const command of [
          'accounts:create',
          'accounts:list',
          'accounts:set-plan',
          'keys:create',
          'keys:list',
          'keys:revoke',
        ])
          expect(run.stdout).toContain(command);
        expect(run.stdout).toContain(
          'Exit codes: 0 done, 1 the command failed, 2 the command line is wrong.',
        );
      },
    );

    it('<command> --help describes that command, without touching the database', async () => {
      const run = await cli('keys:revoke', '--help');
      expect(run).toEqual({
        code: 0,
        stderr: '',
        stdout: expect.stringMatching(/^usage: npx cms keys:revoke --key-id ID\n/),
      });
    });
  });

  describe('keys:list', () => {
    it("lists the account's keys, revoked ones too, never a secret", async () => {
      const created = await create('Key lister', 'pro');
      const second = oneJsonLine(await cli('keys:create', '--account', created.accountId));
      oneJsonLine(await cli('keys:revoke', '--key-id', created.keyId));
      const run = await cli('keys:list', '--account', created.accountId);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const keys = run.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(keys).toEqual([
        {
          keyId: created.keyId,
          accountId: created.accountId,
          createdAt: expect.any(String),
          revokedAt: expect.any(String),
          scopes: SCOPES,
        },
        {
          keyId: second.keyId,
          accountId: created.accountId,
          createdAt: expect.any(String),
          revokedAt: null,
          scopes: SCOPES,
        },
      ]);
      // The secret is everything after `cms_<keyId>_` (base64url: it may itself contain `_`).
      const secretOf = (apiKey: string) => apiKey.split('_').slice(2).join('_');
      expect(run.stdout).not.toContain(secretOf(created.apiKey));
      expect(run.stdout).not.toContain(secretOf(second.apiKey));
    });

    it('an unknown account is exit 1', async () => {
      const run = await cli('keys:list', '--account', randomUUID());
      expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 1, stdout: '' });
      expect(run.stderr).toMatch(/^error: no account /);
    });
  });
});
