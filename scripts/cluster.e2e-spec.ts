import { execFile } from 'node:child_process';
import path from 'node:path';
import { Client } from 'pg';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';
import {
  ApiClient,
  ClusterProcess,
  createAccountWithCli,
  EventTap,
  eventually,
  ScenarioWorkload,
  sleep,
  WebhookReceiver,
} from '@app/testing';

/**
 * `npm run start:cluster` (docs/scaling.md): two replicas of each service as
 * real processes under the supervisor. Traffic through both gateways is applied exactly once,
 * every event is published once and delivered to a webhook once; SIGTERM to one replica of each
 * service under load loses nothing that was accepted, answers what was in flight, and the replica
 * exits 0 while the others carry on; SIGTERM to the supervisor stops the rest gracefully.
 */

const REPLICAS = { gateway: 2, conversations: 2, webhooks: 2 };
const WORKERS = 6;
const WEBHOOK_LEASE_SECONDS = 5;

describe('npm run start:cluster: two replicas of each service', () => {
  let cluster: ClusterProcess;
  let tap: EventTap;
  let db: Client;

  beforeAll(async () => {
    cluster = await ClusterProcess.start(REPLICAS, {
      // Quick retries and polls, short leases, receivers on 127.0.0.1 (as in TestStack).
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      WEBHOOK_POLL_MS: '100',
      WEBHOOK_LEASE_SECONDS: String(WEBHOOK_LEASE_SECONDS),
      OUTBOX_POLL_MS: '200',
      SHUTDOWN_DRAIN_MS: '1000',
    });
    tap = await EventTap.open('#');
    db = new Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await tap?.close();
    await db?.end();
    await cluster?.stop('SIGKILL');
  });

  /** A new account with a webhook subscription to every event, delivered to a new receiver. */
  async function subscribedAccount(): Promise<{
    accountId: string;
    apiKey: string;
    receiver: WebhookReceiver;
  }> {
    const { accountId, apiKey } = await createAccountWithCli('Cluster test');
    const receiver = await WebhookReceiver.start();
    const created = await new ApiClient(cluster.gatewayUrls[0], apiKey).post('/v1/webhooks', {
      url: receiver.url,
      events: ['*'],
    });
    expect(created.status).toBe(201);
    return { accountId, apiKey, receiver };
  }

  /**
   * The state through the API is exactly what the workload was told it did; every outbox event
   * reached the broker once; every public event reached the webhook once (by webhook-id).
   */
  async function expectAppliedOnce(
    workload: ScenarioWorkload,
    { accountId, apiKey, receiver }: { accountId: string; apiKey: string; receiver: WebhookReceiver },
    gateway: string,
  ) {
    await workload.expectApplied(new ApiClient(gateway, apiKey));

    const outbox = await eventually(async () => {
      const { rows } = await db.query<{ event_id: string; type: string; published: boolean }>(
        `SELECT event_id, type, published_at IS NOT NULL AS published FROM conversations.outbox WHERE account_id = $1`,
        [accountId],
      );
      return rows.every((row) => row.published) && rows;
    }, 30_000);
    const byType: Record<string, number> = {};
    for (const row of outbox) byType[row.type] = (byType[row.type] ?? 0) + 1;
    expect(byType).toEqual(workload.events);

    const published = await tap.waitForAccount(accountId, outbox.length, 30_000);
    const publishedIds = published.map((tapped) => tapped.event.id);
    expect(new Set(publishedIds).size).toBe(publishedIds.length);
    expect(new Set(publishedIds)).toEqual(new Set(outbox.map((row) => row.event_id)));

    const forWebhooks = published.filter((tapped) =>
      (PUBLIC_EVENT_TYPES as readonly string[]).includes(tapped.routingKey),
    );
    await receiver.waitFor(forWebhooks.length, undefined, 60_000);
    // A duplicate would come from a lapsed lease: give one the time to show before counting.
    await sleep((WEBHOOK_LEASE_SECONDS + 1) * 1000);
    const delivered = receiver.received.map((request) => request.headers['webhook-id']);
    expect(delivered.length).toBe(new Set(delivered).size);
    expect(new Set(delivered)).toEqual(new Set(forWebhooks.map((tapped) => tapped.event.id)));
  }

  it('applies concurrent traffic through both gateways once: counts, events and webhooks', async () => {
    const account = await subscribedAccount();
    try {
      const workload = new ScenarioWorkload(cluster.gatewayUrls, account.apiKey, 'steady', WORKERS);
      await workload.run(4);
      expect(workload.resets).toEqual([]);
      // Both gateways served, and through either the totals are the same.
      expect(new Set(workload.answeredAt.map((answer) => answer.url))).toEqual(new Set(cluster.gatewayUrls));
      for (const gateway of cluster.gatewayUrls) await expectAppliedOnce(workload, account, gateway);
    } finally {
      await account.receiver.close();
    }
  }, 180_000);

  it('SIGTERM to one replica of each service under load: exit 0, in-flight work answered, nothing lost or doubled', async () => {
    const account = await subscribedAccount();
    try {
      const workload = new ScenarioWorkload(cluster.gatewayUrls, account.apiKey, 'shutdown', WORKERS);
      const load = workload.run();
      await eventually(() => workload.completed >= 2 * WORKERS, 60_000);
      const stopping = ['gateway#0', 'conversations#0', 'webhooks#0'];
      const signalledAt = Date.now();
      for (const replica of stopping) cluster.signal(replica);
      const exits = await Promise.all(stopping.map((replica) => cluster.exitOf(replica)));
      expect(exits).toEqual(stopping.map(() => 'exited with code 0'));
      // The survivors carry the load on.
      const before = workload.completed;
      await eventually(() => workload.completed >= before + 2 * WORKERS, 60_000);
      workload.stop();
      await load;

      expect(workload.lostResponses).toEqual([]);
      // The stopping gateway answered requests after the signal (those in flight and during the drain).
      const stopped = cluster.gatewayUrls[0];
      expect(workload.answeredAt.some(({ url, at }) => url === stopped && at > signalledAt)).toBe(true);
      await expectAppliedOnce(workload, account, cluster.gatewayUrls[1]);
    } finally {
      await account.receiver.close();
    }
  }, 240_000);

  it('the health check script answers 0 for a ready replica and 1 otherwise', async () => {
    const healthcheck = (env: Record<string, string>) =>
      new Promise<number>((resolve) => {
        const script = path.join(__dirname, 'healthcheck.ts');
        execFile(
          process.execPath,
          ['-r', '@swc-node/register', script],
          { env: { ...process.env, ...env } },
          (error) => resolve(error ? Number(error.code ?? 1) : 0),
        );
      });
    const port = new URL(cluster.gatewayUrls[1]).port;
    expect(await healthcheck({ SERVICE: 'gateway', PORT: port })).toBe(0);
    expect(await healthcheck({ SERVICE: 'gateway', PORT: '1' })).toBe(1); // nothing listens there
    expect(await healthcheck({ SERVICE: 'nonsense' })).toBe(1);
  }, 60_000);

  it('SIGTERM to the supervisor stops every remaining replica gracefully and exits 0', async () => {
    expect(await cluster.stop('SIGTERM')).toBe(0);
    for (const replica of ['gateway#1', 'conversations#1', 'webhooks#1']) {
      expect(await cluster.exitOf(replica)).toBe('exited with code 0');
    }
  }, 60_000);
});
