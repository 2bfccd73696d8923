import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import {
  ApiClient,
  ApiResponse,
  eventually,
  expectProblem,
  requireExecutable,
  ServiceProcess,
  TestAccount,
  TestStack,
  timed,
} from '@app/testing';

/**
 * The rate limiter when Redis fails (docs/rate-limits.md: RATE_LIMIT_FAIL_MODE=open|closed,
 * logged). The run's shared Redis is never touched: two real gateway processes (fail open, fail
 * closed) use a throwaway redis-server of this file's own, which is stopped, killed and restarted
 * on the same port. Limiting resumes by itself once Redis is back, without restarting a gateway.
 */

const LIMIT = 3;
/** "Promptly": well under a second, nothing like a connect timeout or a retry loop. */
const PROMPT_MS = 1_000;
const FAILURE_LOG = 'rate limiter cannot reach Redis';

const QUOTA_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** A redis-server of the test's own: no persistence, so a restart starts from nothing. */
class ThrowawayRedis {
  private child?: ChildProcess;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    this.child = child;
    await eventually(() => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      return (
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG'
      );
    }, 10_000);
  }

  /** SIGSTOP/SIGCONT: Redis hangs (connections stay open, nothing is answered) and resumes. */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }
}

function expectNoQuotaHeaders(res: ApiResponse): void {
  for (const name of QUOTA_HEADERS)
    expect({ name, value: res.headers.get(name) }).toEqual({ name, value: null });
}

function expectQuota(res: ApiResponse, remaining: number): void {
  expect({
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    policy: res.headers.get('ratelimit-policy'),
    state: res.headers.get('ratelimit'),
  }).toEqual({
    limit: String(LIMIT),
    remaining: String(remaining),
    policy: `"hourly";q=${LIMIT};w=3600`,
    state: expect.stringMatching(new RegExp(`^"hourly";r=${remaining};t=\\d+$`)),
  });
  expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
}

/** The failure log lines of a gateway process, parsed. */
function failureLogs(gateway: ServiceProcess): Array<Record<string, unknown>> {
  return gateway.logs
    .split('\n')
    .filter((line) => line.includes(FAILURE_LOG))
    .map((line) => JSON.parse(line));
}

describe('rate limiting when Redis fails', () => {
  let redis: ThrowawayRedis;
  let stack: TestStack;
  let failOpen: ServiceProcess;
  let failClosed: ServiceProcess;
  let openAccount: TestAccount;
  let closedAccount: TestAccount;
  let openApi: ApiClient;
  let closedApi: ApiClient;

  beforeAll(async () => {
    requireExecutable(
      'redis-server',
      'The Redis failure test',
      'install it with `sudo apt-get install redis-server`',
    );
    redis = new ThrowawayRedis(await freePort());
    await redis.start();
    // The stack provides the conversations service (and accounts); its own gateway is not used.
    stack = await TestStack.start();
    const env = { REDIS_URL: redis.url, RATE_LIMIT_TRIAL: String(LIMIT), LOG_LEVEL: 'info' };
    [failOpen, failClosed] = await Promise.all([
      // Open is the default: not set explicitly.
      ServiceProcess.start('gateway', env),
      ServiceProcess.start('gateway', { ...env, RATE_LIMIT_FAIL_MODE: 'closed' }),
    ]);
    [openAccount, closedAccount] = await Promise.all([
      stack.createAccount('trial'),
      stack.createAccount('trial'),
    ]);
    openApi = new ApiClient(failOpen.url, openAccount.apiKey);
    closedApi = new ApiClient(failClosed.url, closedAccount.apiKey);
  }, 60_000);

  afterAll(async () => {
    redis?.resume();
    await Promise.all([failOpen?.stop(), failClosed?.stop()]);
    await stack?.close();
    await redis?.kill();
  });

  it('with Redis up, both gateways limit (control)', async () => {
    const open = await openApi.get('/v1/conversations');
    expect(open.status).toBe(200);
    expectQuota(open, LIMIT - 1);
    const closed = await closedApi.get('/v1/conversations');
    expect(closed.status).toBe(200);
    expectQuota(closed, LIMIT - 1);
    expect(failOpen.logged(FAILURE_LOG) || failClosed.logged(FAILURE_LOG)).toBe(false);
  });

  it('Redis hanging (SIGSTOP): fail open admits and fail closed answers 503 within REDIS_TIMEOUT_MS, not after a hang', async () => {
    redis.pause();
    try {
      for (let i = 0; i < 2; i += 1) {
        const open = await timed(openApi.get('/v1/conversations'));
        expect({ status: open.status, prompt: open.elapsedMs < PROMPT_MS }).toEqual({
          status: 200,
          prompt: true,
        });
        expectNoQuotaHeaders(open);
        const closed = await timed(closedApi.get('/v1/conversations'));
        expectProblem(closed, 503, 'service_unavailable');
        expect(closed.elapsedMs).toBeLessThan(PROMPT_MS);
      }
    } finally {
      redis.resume();
    }
  });

  it('fail closed: requests refused with 503 while Redis hangs are not counted once it is back', async () => {
    const account = await stack.createAccount('trial');
    const api = new ApiClient(failClosed.url, account.apiKey);
    const first = await api.get('/v1/conversations');
    expect(first.status).toBe(200);
    expectQuota(first, LIMIT - 1);
    redis.pause();
    try {
      // More refusals than the quota has left: had any been counted, the account would be over it.
      for (let i = 0; i < LIMIT + 2; i += 1) {
        expectProblem(
          await closedApi.withKey(account.apiKey).get('/v1/conversations'),
          503,
          'service_unavailable',
        );
      }
    } finally {
      redis.resume();
    }
    const next = await eventually(
      async () => {
        const res = await api.get('/v1/conversations');
        if (res.status === 503) throw new Error('Redis not answering yet');
        return res;
      },
      10_000,
      100,
    );
    expect(next.status).toBe(200);
    expectQuota(next, LIMIT - 2);
  });

  it('Redis gone: fail open (the default) admits every request promptly, beyond the quota, without quota headers; logged', async () => {
    await redis.kill();
    for (let i = 0; i < LIMIT + 3; i += 1) {
      const res = await timed(openApi.get('/v1/conversations'));
      expect({ i, status: res.status, prompt: res.elapsedMs < PROMPT_MS }).toEqual({
        i,
        status: 200,
        prompt: true,
      });
      expectNoQuotaHeaders(res);
    }
    await eventually(() => failOpen.logged(FAILURE_LOG), 5_000);
    expect(failureLogs(failOpen)[0]).toMatchObject({ fail_mode: 'open', msg: FAILURE_LOG });
    // Health and docs are unaffected.
    expect((await openApi.get('/health/live')).status).toBe(200);
    expect((await openApi.get('/openapi.json')).status).toBe(200);
  });

  it('Redis gone: fail closed answers 503 service_unavailable promptly; logged; health and docs still answer', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await timed(closedApi.get('/v1/conversations'));
      expectProblem(res, 503, 'service_unavailable');
      expect(res.elapsedMs).toBeLessThan(PROMPT_MS);
    }
    const write = await timed(closedApi.post('/v1/conversations', { subject: 'not while unlimited' }));
    expectProblem(write, 503, 'service_unavailable');
    expect(write.elapsedMs).toBeLessThan(PROMPT_MS);
    await eventually(() => failClosed.logged(FAILURE_LOG), 5_000);
    expect(failureLogs(failClosed)[0]).toMatchObject({ fail_mode: 'closed', msg: FAILURE_LOG });
    expect((await closedApi.get('/health/live')).status).toBe(200);
    expect((await closedApi.get('/openapi.json')).status).toBe(200);
    // Nothing was created behind the 503.
    const rows = await stack.query(
      `SELECT count(*)::int AS n FROM conversations.conversations WHERE subject = $1`,
      ['not while unlimited'],
    );
    expect(rows[0].n).toBe(0);
  });

  it('Redis back on the same port: both gateways limit again by themselves (same processes), from a fresh count', async () => {
    const pids = [failOpen.child.pid, failClosed.child.pid];
    await redis.start();

    // Fail open: requests are admitted throughout; the quota headers come back with the connection.
    const openBack = await eventually(
      async () => {
        const res = await openApi.get('/v1/conversations');
        expect(res.status).toBe(200);
        if (res.headers.get('x-ratelimit-remaining') === null) throw new Error('still no quota headers');
        return res;
      },
      10_000,
      100,
    );
    // The restarted Redis kept nothing: this is the first counted request.
    expectQuota(openBack, LIMIT - 1);
    for (let remaining = LIMIT - 2; remaining >= 0; remaining -= 1) {
      const res = await openApi.get('/v1/conversations');
      expect(res.status).toBe(200);
      expectQuota(res, remaining);
    }
    const openRefused = await openApi.get('/v1/conversations');
    expectProblem(openRefused, 429, 'rate_limited');
    expectQuota(openRefused, 0);
    expect(Number(openRefused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Fail closed: 503 until the connection is back, then the normal quota.
    const closedBack = await eventually(
      async () => {
        const res = await closedApi.get('/v1/conversations');
        if (res.status !== 200) throw new Error(`still ${res.status}`);
        return res;
      },
      10_000,
      100,
    );
    expectQuota(closedBack, LIMIT - 1);
    for (let remaining = LIMIT - 2; remaining >= 0; remaining -= 1) {
      const res = await closedApi.get('/v1/conversations');
      expect(res.status).toBe(200);
      expectQuota(res, remaining);
    }
    const closedRefused = await closedApi.get('/v1/conversations');
    expectProblem(closedRefused, 429, 'rate_limited');
    expectQuota(closedRefused, 0);

    expect([failOpen.child.pid, failClosed.child.pid]).toEqual(pids);
    expect([failOpen.child.exitCode, failClosed.child.exitCode]).toEqual([null, null]);
  });
});
