import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import amqplib from 'amqplib';
import { Client } from 'pg';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { conversationsSchema, gatewaySchema, loadConfig, webhooksSchema } from '@app/config';
import { CONVERSATIONS_EVENTS_EXCHANGE } from '@app/contracts';
import { prepareDatabase } from '@app/database';
import { PUBLIC_EVENT_TYPES } from '@app/dialects';
import {
  ADMIN_DATABASE_URL,
  amqpUrlFor,
  createVhost,
  databaseUrlFor,
  deleteVhost,
  eventually,
  newRunId,
  REDIS_URL,
  sleep,
  WebhookReceiver,
} from '@app/testing';
import {
  CONVERSATIONS_SCHEMA,
  conversationsDataSourceOptions,
} from '../../services/conversations/src/data-source';
import { migrateGateway } from '../../services/gateway/src/gateway-service';
import { WEBHOOKS_SCHEMA, webhooksDataSourceOptions } from '../../services/webhooks/src/data-source';
import { previousRelease, ROOT } from '../release/previous-release';
import { ReleaseCheckout } from '../release/release-checkout';
import type { ServiceName } from '../replicas';
import { type Build, Fleet } from './test/fleet';
import { MixedLoad } from './test/mixed-load';

/**
 * `npm run test:upgrade` (docs/scaling.md, "Upgrading"): the previous release (CHANGELOG.md, or
 * UPGRADE_FROM) runs 2 replicas of each service on a database, vhost and Redis prefix of its own
 * under a steady mixed load (MixedLoad); HEAD's migrations run while it serves; then every
 * replica is replaced by one of HEAD, one at a time, service by service in the order given. The
 * audit: no failed request, every acknowledged write stored once, every event on a queue bound to
 * `conversations.events`, every public event delivered once to the webhook receiver with a valid
 * signature and seen once on the event stream, which resumed across the gateways' replacement.
 */
const REPLICAS = 2;
const ALL_ORDERS: Array<{ name: string; services: ServiceName[] }> = [
  { name: 'gateway first', services: ['gateway', 'conversations', 'webhooks'] },
  { name: 'services first', services: ['conversations', 'webhooks', 'gateway'] },
];
/** `UPGRADE_ORDER="services first"` runs one order only (to try a change quickly); CI runs both. */
const ORDERS = ALL_ORDERS.filter(
  ({ name }) => !process.env.UPGRADE_ORDER || name === process.env.UPGRADE_ORDER,
);
/** Load on one release before the next step, so each step happens under load. */
const SETTLE_MS = 3000;
/**
 * Retries within a minute, so that deliveries the previous release's replicas could not sign
 * (docs/scaling.md, "Webhooks replicas, from v1.0.0") reach the new ones within the test, yet
 * 21 attempts over 16 minutes outlast the roll: attempts failed on old replicas count, and with
 * retries 1-10 s apart (176 s in all) deliveries ran out of attempts during a 286 s roll.
 */
const RETRY_SCHEDULE = [1, 2, 5, 10, ...Array<number>(16).fill(60)].join(',');
/** The last retry due when the old webhooks replicas stop, plus its jitter and the load's tail. */
const DELIVERY_TIMEOUT_MS = 150_000;
const AUDIT_QUEUE = 'upgrade.audit';
const CACHE = process.env.UPGRADE_CACHE_DIR ?? path.join(tmpdir(), 'cms-upgrade-releases');

let previous: Build;
const head: Build = { version: 'HEAD', dir: ROOT };
const figures: Record<string, unknown> = {};

beforeAll(() => {
  const release = previousRelease();
  const say = (line: string) => process.stdout.write(`test:upgrade: ${line}\n`);
  say(`upgrading from ${release.version} (${release.commit.slice(0, 12)}) to HEAD`);
  previous = { version: release.version, dir: ReleaseCheckout.built(release, CACHE, say).dir };
}, 15 * 60_000);

afterAll(() => console.log(`test:upgrade figures:\n${JSON.stringify(figures, null, 2)}`));

describe.each(ORDERS)('rolling upgrade to HEAD, $name', ({ name, services }) => {
  const runId = newRunId();
  const env = {
    DATABASE_URL: databaseUrlFor(runId),
    AMQP_URL: amqpUrlFor(runId),
    REDIS_URL,
    REDIS_KEY_PREFIX: `${runId}:`,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: RETRY_SCHEDULE,
    RATE_LIMIT_BUSINESS: '1000000000',
    // The test measures an upgrade, not the machine: on a shared, loaded one the event loop lags
    // now and then, and the gateways would shed load (503 overloaded) for that alone.
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  const fleet = new Fleet(env);
  let receiver: WebhookReceiver;
  let load: MixedLoad | undefined;
  let db: Client;
  let secret = '';
  /** Deliveries that did not verify with the subscription's secret. */
  const badSignatures: string[] = [];

  beforeAll(async () => {
    const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${runId}"`);
    await admin.end();
    createVhost(runId);
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    receiver = await WebhookReceiver.start();
    receiver.answer((request) => {
      try {
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
        return { status: 200 };
      } catch {
        badSignatures.push(String(request.headers['webhook-id']));
        return { status: 400 };
      }
    });
  }, 60_000);

  afterAll(async () => {
    await load?.stop();
    await fleet.stop();
    await receiver?.close();
    await db?.end();
    deleteVhost(runId);
    const admin = new Client({ connectionString: ADMIN_DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${runId}" WITH (FORCE)`);
    await admin.end();
  }, 120_000);

  it(
    'serves with no failed request and loses nothing while every replica is replaced',
    async () => {
      const started = Date.now();
      const phases: Record<string, number> = {};
      const phase = (label: string) => (phases[label] = Math.round((Date.now() - started) / 1000));

      await fleet.start(previous, REPLICAS);
      phase(`${previous.version} fleet up`);
      const account = JSON.parse(
        execFileSync(
          process.execPath,
          ['bin/cms.js', 'accounts:create', '--name', 'upgrade', '--plan', 'business'],
          {
            cwd: previous.dir,
            env: { ...process.env, ...env, LOG_LEVEL: 'error' },
            encoding: 'utf8',
          },
        ),
      ) as { accountId: string; apiKey: string };
      const hook = await fleet.through((gateway) =>
        fetch(`${gateway}/v1/webhooks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: receiver.url, events: ['*'] }),
        }),
      );
      expect(hook.status).toBe(201);
      secret = ((await hook.json()) as { secret: string }).secret;
      await bindAuditQueue(env.AMQP_URL);

      load = new MixedLoad(fleet, account.apiKey);
      await sleep(SETTLE_MS);
      await migrateHead({ ...process.env, ...env });
      phase('HEAD migrated');
      await sleep(SETTLE_MS);
      for (const service of services) {
        for (let index = 0; index < REPLICAS; index++) await fleet.replace(service, index, head);
        phase(`${service} replaced`);
      }
      await sleep(SETTLE_MS);
      await load.stop();
      phase('load stopped');

      const writes = await acknowledgedWrites(db, account.accountId, load);
      const outbox = await eventually(async () => {
        const { rows } = await db.query<{ event_id: string; type: string; published: boolean }>(
          `SELECT event_id, type, published_at IS NOT NULL AS published FROM conversations.outbox WHERE account_id = $1`,
          [account.accountId],
        );
        return rows.every((row) => row.published) && rows;
      }, 60_000);
      const onQueue = await drainAuditQueue(env.AMQP_URL);
      const expected = outbox.filter((row) => (PUBLIC_EVENT_TYPES as readonly string[]).includes(row.type));
      const deliveredOnce = () => {
        const copies = countBy(
          receiver.received
            .filter((request) => !badSignatures.includes(String(request.headers['webhook-id'])))
            .map((request) => String(request.headers['webhook-id'])),
        );
        return expected.every((row) => copies.get(row.event_id) === 1);
      };
      await eventually(deliveredOnce, DELIVERY_TIMEOUT_MS, 500).catch(() => undefined);
      phase('audited');
      const webhookCopies = countBy(
        receiver.received.map((request) => String(request.headers['webhook-id'])),
      );
      const streamCopies = countBy(load.stream.ids);
      const { rows: unsigned } = await db.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM webhooks.delivery_attempts a
         JOIN webhooks.deliveries d ON d.id = a.delivery_id
        WHERE d.account_id = $1 AND a.status_code IS NULL`,
        [account.accountId],
      );
      const audit = {
        failedRequests: load.failures.length,
        failures: Object.fromEntries(
          countBy(load.failures.map((failure) => failure.replace(/[0-9a-f-]{36}/g, ':id'))),
        ),
        lost: writes.lost,
        doubled: writes.doubled,
        eventsLostOnQueue: outbox.filter((row) => !onQueue.has(row.event_id)).length,
        webhooksNotDeliveredOnce: expected.filter((row) => webhookCopies.get(row.event_id) !== 1).length,
        badSignatures: badSignatures.length,
        streamGaps: expected.filter((row) => !streamCopies.has(row.event_id)).length,
        streamDuplicates: [...streamCopies.values()].filter((count) => count > 1).length,
      };
      figures[name] = {
        from: previous.version,
        ...load.figures(),
        conversations: writes.conversations,
        messages: writes.messages,
        events: outbox.length,
        publicEvents: expected.length,
        eventCopiesOnQueue: [...onQueue.values()].reduce((sum, count) => sum + count, 0),
        attemptsWithoutResponse: unsigned[0].count,
        streamConnections: load.stream.connections,
        replicaStops: fleet.stops,
        secondsAt: phases,
        ...audit,
        serviceErrors: fleet.errorLines(),
      };
      expect(audit).toEqual({
        failedRequests: 0,
        failures: {},
        lost: 0,
        doubled: 0,
        eventsLostOnQueue: 0,
        webhooksNotDeliveredOnce: 0,
        badSignatures: 0,
        streamGaps: 0,
        streamDuplicates: 0,
      });
      expect(fleet.stops.every((stop) => stop.endsWith('exit 0'))).toBe(true);
    },
    12 * 60_000,
  );
});

/** HEAD's migrations of every service's schema, as its replicas run them on start. */
async function migrateHead(env: NodeJS.ProcessEnv): Promise<void> {
  const logger = pino({ level: 'warn' });
  await migrateGateway(loadConfig(gatewaySchema, env), logger);
  const conversations = { ...loadConfig(conversationsSchema, env), DATABASE_POOL_SIZE: 2 };
  await prepareDatabase(conversationsDataSourceOptions(conversations), CONVERSATIONS_SCHEMA, logger);
  const webhooks = { ...loadConfig(webhooksSchema, env), DATABASE_POOL_SIZE: 2 };
  await prepareDatabase(webhooksDataSourceOptions(webhooks), WEBHOOKS_SCHEMA, logger);
}

/** Every acknowledged conversation and message stored, none twice (an unacknowledged try may have landed). */
async function acknowledgedWrites(
  db: Client,
  accountId: string,
  load: MixedLoad,
): Promise<{ conversations: number; messages: number; lost: number; doubled: number }> {
  const { rows } = await db.query<{ id: string; messages: number }>(
    `SELECT c.id, (SELECT count(*)::int FROM conversations.messages m WHERE m.conversation_id = c.id) AS messages
       FROM conversations.conversations c WHERE c.account_id = $1`,
    [accountId],
  );
  const stored = new Map(rows.map((row) => [row.id, row.messages]));
  const acknowledged = [...load.acknowledged];
  return {
    conversations: acknowledged.length,
    messages: acknowledged.reduce((sum, [, messages]) => sum + messages, 0),
    lost: acknowledged.filter(([id, messages]) => (stored.get(id) ?? -1) < messages).length,
    doubled: acknowledged.filter(([id, messages]) => (stored.get(id) ?? 0) > messages + 1).length,
  };
}

async function bindAuditQueue(amqpUrl: string): Promise<void> {
  const connection = await amqplib.connect(amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertQueue(AUDIT_QUEUE, { durable: true });
  await channel.bindQueue(AUDIT_QUEUE, CONVERSATIONS_EVENTS_EXCHANGE, '#');
  await connection.close();
}

/** How many copies of each event id the audit queue holds. */
async function drainAuditQueue(amqpUrl: string): Promise<Map<string, number>> {
  const connection = await amqplib.connect(amqpUrl);
  const channel = await connection.createChannel();
  const ids: string[] = [];
  for (let message = await channel.get(AUDIT_QUEUE, { noAck: true }); message;) {
    ids.push((JSON.parse(message.content.toString()) as { id: string }).id);
    message = await channel.get(AUDIT_QUEUE, { noAck: true });
  }
  await connection.close();
  return countBy(ids);
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
