import { z } from 'zod';
import {
  conversationsSchema,
  gatewaySchema,
  requireSecretsKeysInProduction,
  webhooksSchema,
} from './config-schemas';
import { boolean, ConfigError, hostPortList, integer, loadConfig, url, urlList } from './load-config';

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

describe('loadConfig', () => {
  it('applies the documented local defaults when nothing is set', () => {
    const config = loadConfig(gatewaySchema, {});
    expect(config).toMatchObject({
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: 3000,
      RPC_TIMEOUT_MS: 5000,
      AMQP_PREFETCH: 32,
    });
    expect(loadConfig(conversationsSchema, {}).RUN_MIGRATIONS).toBe(true);
  });

  it('coerces numbers and booleans and keeps strings', () => {
    const config = loadConfig(conversationsSchema, {
      OUTBOX_POLL_MS: '250',
      OUTBOX_BATCH_SIZE: '17',
      RUN_MIGRATIONS: 'false',
      DATABASE_URL: 'postgresql://u:p@db:5433/x',
      LOG_LEVEL: 'debug',
    });
    expect(config.OUTBOX_POLL_MS).toBe(250);
    expect(config.OUTBOX_BATCH_SIZE).toBe(17);
    expect(config.RUN_MIGRATIONS).toBe(false);
    expect(config.DATABASE_URL).toBe('postgresql://u:p@db:5433/x');
    expect(config.LOG_LEVEL).toBe('debug');
  });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads boolean %j as %s', (text, expected) => {
    expect(loadConfig({ FLAG: boolean(!expected) }, { FLAG: text }).FLAG).toBe(expected);
  });

  it('treats an empty variable as unset (its default applies)', () => {
    const config = loadConfig(gatewaySchema, { PORT: '', DATABASE_URL: '', RPC_TIMEOUT_MS: '' });
    expect(config.PORT).toBe(3000);
    expect(config.RPC_TIMEOUT_MS).toBe(5000);
    expect(config.DATABASE_URL).toBe('postgres://postgres@127.0.0.1:5432/postgres');
  });

  it('ignores variables the schema does not name and does not modify the environment', () => {
    const env = { PORT: '8080', UNRELATED: 'x' };
    const config = loadConfig(gatewaySchema, env) as Record<string, unknown>;
    expect(config.PORT).toBe(8080);
    expect(config).not.toHaveProperty('UNRELATED');
    expect(env).toEqual({ PORT: '8080', UNRELATED: 'x' });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['RPC_TIMEOUT_MS', '99'],
    ['AMQP_PREFETCH', '0'],
    ['DATABASE_URL', 'mysql://db/x'],
    ['DATABASE_URL', 'not a url'],
    ['AMQP_URL', 'http://127.0.0.1:5672'],
    ['REDIS_URL', 'postgres://127.0.0.1'],
    ['LOG_LEVEL', 'verbose'],
    ['NODE_ENV', 'staging'],
  ])('names %s in the error when it is %j', (name, value) => {
    const error = configError(() => loadConfig(gatewaySchema, { [name]: value }));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0].startsWith(`${name}: `)).toBe(true);
    expect(error.message).toContain(name);
    expect(error.message).toMatch(/^Invalid configuration/);
    expect(error.name).toBe('ConfigError');
  });

  it.each([
    ['WEBHOOK_RETRY_SCHEDULE', 'x', webhooksSchema],
    ['WEBHOOK_RETRY_SCHEDULE', '5,,10', webhooksSchema],
    ['WEBHOOK_RETRY_SCHEDULE', '604801', webhooksSchema],
    ['WEBHOOK_TIMEOUT_MS', '99', webhooksSchema],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes', webhooksSchema],
    ['RATE_LIMIT_FAIL_MODE', 'maybe', gatewaySchema],
    ['TRUST_PROXY', 'on', gatewaySchema],
    ['OUTBOX_POLL_MS', 'fast', conversationsSchema],
  ])('names %s in the error when it is %j (service schemas)', (name, value, schema) => {
    const error = configError(() => loadConfig(schema, { [name]: value }));
    expect(error.problems).toEqual([expect.stringMatching(new RegExp(`^${name}: `))]);
  });

  it('names a bad boolean', () => {
    const error = configError(() => loadConfig(conversationsSchema, { RUN_MIGRATIONS: 'yes' }));
    expect(error.problems).toEqual([expect.stringMatching(/^RUN_MIGRATIONS: /)]);
  });

  it('lists every problem at once, one line each, not just the first', () => {
    const error = configError(() =>
      loadConfig(gatewaySchema, {
        PORT: 'abc',
        DATABASE_URL: 'mysql://db/x',
        AMQP_URL: 'nope',
        RPC_TIMEOUT_MS: '999999999',
        LOG_LEVEL: 'loud',
        HOST: '0.0.0.0', // valid: not reported
      }),
    );
    const named = error.problems.map((problem) => problem.split(':')[0]).sort();
    expect(named).toEqual(['AMQP_URL', 'DATABASE_URL', 'LOG_LEVEL', 'PORT', 'RPC_TIMEOUT_MS']);
    for (const name of named) expect(error.message).toMatch(new RegExp(`^  - ${name}: .+$`, 'm'));
    expect(error.message.split('\n')).toHaveLength(1 + named.length);
  });

  it('does not echo a credential-bearing URL into the error', () => {
    const error = configError(() =>
      loadConfig(gatewaySchema, { DATABASE_URL: 'mysql://admin:s3cr3t-pw@db/x', PORT: 'x' }),
    );
    expect(error.problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'PORT']);
    expect(error.message).not.toContain('s3cr3t-pw');
  });

  it('tells what a valid value looks like', () => {
    const error = configError(() =>
      loadConfig({ DATABASE_URL: url(['postgres:'], 'postgres://x') }, { DATABASE_URL: 'http://x' }),
    );
    expect(error.problems[0]).toContain('postgres:');
    const range = configError(() => loadConfig({ N: integer(5, 10, 7) }, { N: '11' }));
    expect(range.problems[0]).toMatch(/^N: .*10/);
  });

  it('works with any zod shape (the variable name is the key)', () => {
    const error = configError(() => loadConfig({ MY_SETTING: z.string().min(3) }, { MY_SETTING: 'ab' }));
    expect(error.problems).toEqual([expect.stringMatching(/^MY_SETTING: /)]);
  });

  it('takes a cluster as comma-separated URLs and Sentinels as host:port pairs, naming a bad item', () => {
    const shape = { AMQP_URL: urlList(['amqp:'], 'amqp://a'), REDIS_SENTINELS: hostPortList() };
    expect(
      loadConfig(shape, {
        AMQP_URL: 'amqp://a:5672, amqp://b:5673',
        REDIS_SENTINELS: '127.0.0.1:26379,s2:26380',
      }),
    ).toEqual({
      AMQP_URL: 'amqp://a:5672, amqp://b:5673',
      REDIS_SENTINELS: [
        { host: '127.0.0.1', port: 26379 },
        { host: 's2', port: 26380 },
      ],
    });
    expect(loadConfig(shape, {}).REDIS_SENTINELS).toEqual([]);
    const error = configError(() =>
      loadConfig(shape, { AMQP_URL: 'amqp://a,http://b', REDIS_SENTINELS: 's1:26379,s2' }),
    );
    expect(error.problems).toEqual([
      expect.stringMatching(/^AMQP_URL: .*comma-separated/),
      expect.stringMatching(/^REDIS_SENTINELS: "s2" is not host:port/),
    ]);
  });
});

describe('SECRETS_ENCRYPTION_KEYS', () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');
  const load = (value: string, NODE_ENV = 'development') =>
    requireSecretsKeysInProduction(loadConfig(webhooksSchema, { SECRETS_ENCRYPTION_KEYS: value, NODE_ENV }));

  it('reads id:base64 entries in order, the first being the one that encrypts', () => {
    expect(load(` new:${KEY} , old:${KEY}`).SECRETS_ENCRYPTION_KEYS).toEqual([
      { id: 'new', key: Buffer.alloc(32, 7) },
      { id: 'old', key: Buffer.alloc(32, 7) },
    ]);
  });

  it('is empty when unset outside production (the development key stands in)', () => {
    expect(load('').SECRETS_ENCRYPTION_KEYS).toEqual([]);
  });

  it('is required in production, the variable named', () => {
    expect(configError(() => load('', 'production')).problems).toEqual([
      'SECRETS_ENCRYPTION_KEYS: required when NODE_ENV=production (docs/operations.md, "Secrets at rest")',
    ]);
  });

  it.each([
    ['no id', KEY, 'entry 1 is not id:base64'],
    ['two colons', `a:${KEY}:x`, 'entry 1 is not id:base64'],
    [
      'a short key',
      `a:${Buffer.alloc(16).toString('base64')}`,
      'entry 1 has a key that is not 32 bytes in base64',
    ],
    [
      'a long key',
      `a:${Buffer.alloc(33).toString('base64')}`,
      'entry 1 has a key that is not 32 bytes in base64',
    ],
    ['not base64', `a:${'!'.repeat(44)}`, 'entry 1 has a key that is not 32 bytes in base64'],
    ['a bad id', `a b:${KEY}`, 'entry 1 has an id that is not 1-32 characters'],
    ['the second entry bad', `a:${KEY},b:`, 'entry 2 has a key that is not 32 bytes in base64'],
    ['an id twice', `a:${KEY},a:${KEY}`, 'key id "a" is given twice'],
  ])('refuses %s, naming the variable and the entry, never the key', (_case, value, message) => {
    const error = configError(() => load(value));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(new RegExp(`^SECRETS_ENCRYPTION_KEYS: ${message}`));
    expect(error.message).not.toContain(KEY);
  });
});
