import { randomUUID } from 'node:crypto';
import { CONVERSATIONS_RPC_QUEUE } from '@app/contracts';
import { createLogger } from '@app/observability';
import {
  ApiClient,
  ApiResponse,
  DependencyProxies,
  eventually,
  queueState,
  readinessAnswering,
  ServiceProcess,
  sleep,
  TcpProxy,
  TestAccount,
  TestStack,
  timed,
} from '@app/testing';
import { RunningGateway, startGateway } from '../src/gateway-service';
import { commandIdFor } from '../src/idempotency/key-hashes';

/**
 * Faults (docs/operations.md, "Overload and time bounds"), through TCP proxies of this file's own: the gateway reaches
 * Postgres, RabbitMQ and Redis through one set, the conversations service reaches Postgres through
 * another, so each can be cut (connections dropped, new ones refused) or stalled (connections
 * open, nothing answered) for one service alone. A gateway is also killed (SIGKILL) mid-request.
 *
 * - Every request is answered within RPC_TIMEOUT_MS, whatever hangs.
 * - Every Postgres query and pool acquisition has a client-side bound.
 * - Postgres unreachable is a 503 `database_unavailable` with Retry-After, readiness 503.
 * - An Idempotency-Key held by a request that will never finish is free again after about the RPC
 *   timeout, and a retry then gets the result of the write that was applied.
 * - A key reused with another body or path after a 504 is a 422, never another request's result.
 */

const RPC_TIMEOUT_MS = 1500;
/** Slack beyond a bound for the event loop, HTTP and rendering on a loaded 2-core machine. */
const MARGIN_MS = 750;

/** A 503 or 504 problem with the given code, carrying Retry-After. */
function expectUnavailable(response: ApiResponse, status: 503 | 504, code: string): void {
  expect({ status: response.status, code: response.body?.code }).toEqual({ status, code });
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.body.request_id).toBe(response.headers.get('x-request-id'));
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

/** Every one of `requests` (sent together) is answered with that problem, each within `withinMs`. */
async function expectAllUnavailableWithin(
  requests: Array<Promise<ApiResponse>>,
  status: 503 | 504,
  code: string,
  withinMs: number,
): Promise<void> {
  for (const response of await Promise.all(requests.map(timed))) {
    expectUnavailable(response, status, code);
    expect(response.elapsedMs).toBeLessThan(withinMs);
  }
}

/** Unacknowledged commands on conversations.rpc: taken by the service, not yet answered. */
const rpcCommandsInService = () => queueState(CONVERSATIONS_RPC_QUEUE).unacked;

describe('faults: stalled and unreachable dependencies, a killed gateway', () => {
  let gatewayDependencies: DependencyProxies;
  let conversationsDatabase: TcpProxy;
  let stack: TestStack;
  const gateways: RunningGateway[] = [];
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    gatewayDependencies = await DependencyProxies.start();
    conversationsDatabase = await TcpProxy.for(process.env.DATABASE_URL!);
    stack = await TestStack.start({
      gateway: {
        ...gatewayDependencies.routes(),
        REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}faults:`,
        RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
      },
      // Longer than RPC_TIMEOUT_MS: a command held up by a stall is still applied once it ends,
      // whether it waits on a pooled connection's query or on opening a new connection.
      conversations: {
        DATABASE_URL: conversationsDatabase.route(process.env.DATABASE_URL!),
        DATABASE_QUERY_TIMEOUT_MS: '8000',
        DATABASE_CONNECT_TIMEOUT_MS: '8000',
      },
    });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    for (const gateway of gateways) await gateway.close();
    gatewayDependencies?.proxies.postgres.resume();
    conversationsDatabase?.resume();
    await stack?.close();
    await gatewayDependencies?.close();
    await conversationsDatabase?.close();
  });

  /** An account whose key the stack's gateway has verified (cached), and one it has never seen. */
  async function accounts(): Promise<{ known: TestAccount; unseen: TestAccount }> {
    const [known, unseen] = [await stack.createAccount(), await stack.createAccount()];
    expect((await known.api.get('/v1/conversations')).status).toBe(200);
    return { known, unseen };
  }

  const conversationsWithSubject = async (accountId: string, subject: string) =>
    (
      await stack.query<{ id: string }>(
        `SELECT id FROM conversations.conversations WHERE account_id = $1 AND subject = $2`,
        [accountId, subject],
      )
    ).map((row) => row.id);

  const commandRecorded = async (accountId: string, key: string) =>
    (
      await stack.query(`SELECT 1 FROM conversations.processed_commands WHERE command_id = $1`, [
        commandIdFor(accountId, key),
      ])
    ).length === 1;

  const claimOf = async (accountId: string, key: string) =>
    (
      await stack.query<{ completed_at: Date | null }>(
        `SELECT completed_at FROM gateway.idempotency_keys WHERE account_id = $1 AND key = $2`,
        [accountId, key],
      )
    )[0];

  const serving = (api: ApiClient) =>
    eventually(async () => (await api.get('/v1/conversations')).status === 200, 20_000, 200);

  describe('RPC_TIMEOUT_MS holds whatever hangs', () => {
    it('RabbitMQ stalled (the consumer-count check included): reads and writes are answered within the timeout', async () => {
      const { known } = await accounts();
      // The gateway trusts a consumer count for a second; after that it asks the broker again,
      // over the stalled connection.
      await sleep(1100);
      gatewayDependencies.proxies.rabbitmq.stall();
      try {
        await expectAllUnavailableWithin(
          [
            known.api.get('/v1/conversations'),
            known.api.post('/v1/conversations', { subject: `stalled broker ${randomUUID()}` }),
          ],
          504,
          'upstream_timeout',
          RPC_TIMEOUT_MS + MARGIN_MS,
        );
      } finally {
        gatewayDependencies.proxies.rabbitmq.resume();
      }
      await serving(known.api);
    });

    it("the gateway's own Postgres stalled: a key look-up and an Idempotency-Key claim are answered at the timeout", async () => {
      const { known, unseen } = await accounts();
      gatewayDependencies.proxies.postgres.stall();
      try {
        await expectAllUnavailableWithin(
          [
            unseen.api.get('/v1/conversations'),
            known.api.post(
              '/v1/conversations',
              { subject: 'claim stalled' },
              { headers: { 'idempotency-key': randomUUID() } },
            ),
          ],
          504,
          'upstream_timeout',
          RPC_TIMEOUT_MS + MARGIN_MS,
        );
      } finally {
        gatewayDependencies.proxies.postgres.resume();
      }
      await serving(unseen.api);
    });
  });

  describe('client-side bounds on every query and pool acquisition', () => {
    it('gateway: a stalled query fails after DATABASE_QUERY_TIMEOUT_MS and waiters for the pool after DATABASE_CONNECT_TIMEOUT_MS, long before the RPC timeout', async () => {
      const bounded = await startGateway(
        {
          ...stack.gatewayConfig(),
          RPC_TIMEOUT_MS: 10_000,
          DATABASE_POOL_SIZE: 1,
          DATABASE_QUERY_TIMEOUT_MS: 400,
          DATABASE_CONNECT_TIMEOUT_MS: 300,
        },
        createLogger('test', process.env.TEST_LOG_LEVEL ?? 'silent'),
      );
      gateways.push(bounded);
      const unseen = await Promise.all([1, 2, 3].map(() => stack.createAccount()));
      gatewayDependencies.proxies.postgres.stall();
      try {
        // One look-up holds the only pooled connection; the other two wait for it.
        await expectAllUnavailableWithin(
          unseen.map((account) => new ApiClient(bounded.url, account.apiKey).get('/v1/conversations')),
          503,
          'database_unavailable',
          400 + 300 + MARGIN_MS,
        );
      } finally {
        gatewayDependencies.proxies.postgres.resume();
      }
      await serving(new ApiClient(bounded.url, unseen[0].apiKey));
    });

    it('conversations: a command whose queries stall fails after its DATABASE_QUERY_TIMEOUT_MS, before the gateway gives up', async () => {
      const { known } = await accounts();
      await stack.stopConversations();
      await stack.startConversations({
        DATABASE_QUERY_TIMEOUT_MS: '400',
        DATABASE_CONNECT_TIMEOUT_MS: '300',
      });
      await serving(known.api);
      conversationsDatabase.stall();
      try {
        await expectAllUnavailableWithin(
          [
            known.api.post('/v1/conversations', { subject: `stalled ${randomUUID()}` }),
            known.api.get('/v1/conversations'),
          ],
          503,
          'database_unavailable',
          RPC_TIMEOUT_MS,
        );
      } finally {
        conversationsDatabase.resume();
        await stack.stopConversations();
        await stack.startConversations();
      }
      await serving(known.api);
    });
  });

  describe('Postgres unreachable is a 503 database_unavailable with Retry-After', () => {
    it("the gateway's Postgres cut: unseen keys and keyed writes are 503 database_unavailable, readiness 503; cached keys still read", async () => {
      const { known, unseen } = await accounts();
      await gatewayDependencies.proxies.postgres.cut();
      try {
        expectUnavailable(await unseen.api.get('/v1/conversations'), 503, 'database_unavailable');
        expectUnavailable(
          await known.api.post('/v1/conversations', {}, { headers: { 'idempotency-key': randomUUID() } }),
          503,
          'database_unavailable',
        );
        expect((await known.api.get('/v1/conversations')).status).toBe(200);
        const body = await readinessAnswering(stack.url, 503);
        expect(body.error.postgres).toEqual({ status: 'down', message: expect.any(String) });
        const ready = await fetch(`${stack.url}/health/ready`);
        expect({ status: ready.status, retryAfter: ready.headers.get('retry-after') }).toEqual({
          status: 503,
          retryAfter: expect.stringMatching(/^[1-9]\d*$/),
        });
      } finally {
        await gatewayDependencies.proxies.postgres.restore();
      }
      await readinessAnswering(stack.url, 200);
      await serving(unseen.api);
    });

    it("the conversations service's Postgres cut: its reads and writes are 503 database_unavailable, its readiness 503", async () => {
      const { known } = await accounts();
      await conversationsDatabase.cut();
      try {
        for (const call of [
          () => known.api.get('/v1/conversations'),
          () => known.api.post('/v1/conversations', { subject: 'no database' }),
        ]) {
          expectUnavailable(await call(), 503, 'database_unavailable');
        }
        const opsUrl = stack.conversations!.opsUrl;
        await readinessAnswering(opsUrl, 503);
        expect((await fetch(`${opsUrl}/health/ready`)).headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      } finally {
        await conversationsDatabase.restore();
      }
      await serving(known.api);
    });
  });

  describe('an in-flight Idempotency-Key is freed after about the RPC timeout', () => {
    it('the gateway is killed (SIGKILL) mid-request: a retry later gets the result of the write that was applied', async () => {
      const account = await stack.createAccount();
      const doomed = await ServiceProcess.start('gateway', { RPC_TIMEOUT_MS: '4000' });
      processes.push(doomed);
      const key = randomUUID();
      const subject = `applied while its gateway died ${key}`;
      conversationsDatabase.stall();
      try {
        void new ApiClient(doomed.url, account.apiKey)
          .post('/v1/conversations', { subject }, { headers: { 'idempotency-key': key } })
          .catch(() => undefined);
        // Claimed at the gateway, and taken by the conversations service (held up by the stall).
        await eventually(async () => (await claimOf(account.accountId, key)) !== undefined, 10_000, 50);
        await eventually(() => rpcCommandsInService() > 0, 10_000, 100);
        await doomed.kill();
      } finally {
        conversationsDatabase.resume();
      }
      await eventually(() => commandRecorded(account.accountId, key), 15_000, 100);
      const [created] = await conversationsWithSubject(account.accountId, subject);

      // Another gateway: in use while the dead one's claim lasts, then the applied write's result.
      const retry = () =>
        account.api.post('/v1/conversations', { subject }, { headers: { 'idempotency-key': key } });
      const outcome = await eventually(
        async () => {
          const response = await retry();
          if (response.status === 409) {
            expect(response.body.code).toBe('idempotency_key_in_use');
            return undefined;
          }
          return response;
        },
        15_000,
        250,
      );
      expect({ status: outcome.status, id: outcome.body.id, subject: outcome.body.subject }).toEqual({
        status: 201,
        id: created,
        subject,
      });
      const replay = await retry();
      expect({ status: replay.status, replayed: replay.headers.get('idempotent-replayed') }).toEqual({
        status: 201,
        replayed: 'true',
      });
      expect(replay.text).toBe(outcome.text);
      expect(await conversationsWithSubject(account.accountId, subject)).toEqual([created]);
    });

    it('Postgres unreachable when the gateway would release the key after a 504: a retry later gets the applied result', async () => {
      const { known } = await accounts();
      const key = randomUUID();
      const subject = `released while the database was cut ${key}`;
      const send = () =>
        known.api.post('/v1/conversations', { subject }, { headers: { 'idempotency-key': key } });
      conversationsDatabase.stall();
      let first: ApiResponse;
      try {
        const pending = send();
        await eventually(async () => (await claimOf(known.accountId, key)) !== undefined, 10_000, 50);
        await gatewayDependencies.proxies.postgres.cut();
        first = await pending;
      } finally {
        conversationsDatabase.resume();
        await gatewayDependencies.proxies.postgres.restore();
      }
      expectUnavailable(first, 504, 'upstream_timeout');
      // The release failed: the claim is still there, in flight.
      expect(await claimOf(known.accountId, key)).toEqual({ completed_at: null });
      await eventually(() => commandRecorded(known.accountId, key), 15_000, 100);
      const [created] = await conversationsWithSubject(known.accountId, subject);

      const outcome = await eventually(
        async () => {
          const response = await send();
          return response.status === 409 ? undefined : response;
        },
        15_000,
        250,
      );
      expect({ status: outcome.status, id: outcome.body.id }).toEqual({ status: 201, id: created });
      expect(await conversationsWithSubject(known.accountId, subject)).toEqual([created]);
    });
  });

  describe("a claim is leased from its request's arrival", () => {
    it("a claim that reaches the gateway's Postgres after its request was answered does not hold the key", async () => {
      const { known } = await accounts();
      const key = randomUUID();
      const subject = `claimed late ${key}`;
      const send = () =>
        known.api.post('/v1/conversations', { subject }, { headers: { 'idempotency-key': key } });
      gatewayDependencies.proxies.postgres.stall();
      try {
        expectUnavailable(await send(), 504, 'upstream_timeout');
        // Past the lease counted from arrival (RPC_TIMEOUT_MS + 1 s), within the query's bound.
        await sleep(1_500);
      } finally {
        gatewayDependencies.proxies.postgres.resume();
      }
      // The claim statement the stall held up reaches Postgres now, unless the gateway gave its
      // connection up at the deadline; either way the key must be free for the retry.
      await sleep(1_000);
      const retry = await send();
      expect({ status: retry.status, subject: retry.body.subject }).toEqual({ status: 201, subject });
      expect(await conversationsWithSubject(known.accountId, subject)).toEqual([retry.body.id]);
    });
  });

  describe('the command log knows which request a key belongs to', () => {
    it('after a 504, the same key with another body or on another path is 422 idempotency_key_reused, and the first body gets its result', async () => {
      const { known } = await accounts();
      const target = await known.api.post('/v1/conversations', { subject: 'a conversation to write to' });
      expect(target.status).toBe(201);
      const key = randomUUID();
      const withKey = { headers: { 'idempotency-key': key } };
      const first = { subject: `first ${key}` };
      conversationsDatabase.stall();
      try {
        expectUnavailable(await known.api.post('/v1/conversations', first, withKey), 504, 'upstream_timeout');
      } finally {
        conversationsDatabase.resume();
      }
      await eventually(() => commandRecorded(known.accountId, key), 15_000, 100);
      const [created] = await conversationsWithSubject(known.accountId, first.subject);

      const second = await known.api.post('/v1/conversations', { subject: `second ${key}` }, withKey);
      expect({ status: second.status, code: second.body?.code }).toEqual({
        status: 422,
        code: 'idempotency_key_reused',
      });
      const message = await known.api.post(
        `/v1/conversations/${target.body.id}/messages`,
        { content: 'same key, another operation', sender: 'agent' },
        withKey,
      );
      expect({ status: message.status, code: message.body?.code }).toEqual({
        status: 422,
        code: 'idempotency_key_reused',
      });
      const messages = await stack.query(`SELECT id FROM conversations.messages WHERE conversation_id = $1`, [
        target.body.id,
      ]);
      expect(messages).toEqual([]);
      expect(await conversationsWithSubject(known.accountId, `second ${key}`)).toEqual([]);

      const again = await known.api.post('/v1/conversations', first, withKey);
      expect({ status: again.status, id: again.body.id, subject: again.body.subject }).toEqual({
        status: 201,
        id: created,
        subject: first.subject,
      });
    });
  });
});
