import 'reflect-metadata';
import type autocannon from 'autocannon';
import { mkdirSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { AccountsRepository } from '../services/gateway/src/accounts/accounts.repository';
import { gatewayDataSourceOptions } from '../services/gateway/src/data-source';
import { seedAnalyticsAccount } from './analytics-seed';
import { conversationIdFor, recreateDatabase, seedAccount, settleAfterLoad } from './bench-seed';
import { combineLoads, formatRow, LoadResult, runLoad } from './http-load';
import { ServiceProcesses, waitForReady } from './service-processes';
import { createVhost, deleteVhost } from '../libs/testing/src/test-run';

/** Left over from an interrupted run, the vhost is made afresh. */
function recreateVhost(name: string): void {
  try {
    deleteVhost(name);
  } catch {
    // it did not exist
  }
  createVhost(name);
}
import { benchFanOut, formatFanOut } from './webhooks-fan-out';

/**
 * `npm run bench`: the whole stack (gateway, RabbitMQ, conversations service, Postgres) under
 * autocannon on 127.0.0.1, on the same workload as bench/baseline (list 20 active, get one with
 * 10 messages, send a message), so results compare as ratios with its `broker` variant.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '15' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '64' },
    endpoints: { type: 'string', default: 'list,get,send' },
    /** Also drive `get` through a second gateway with rate limiting off, for the limiter's cost. */
    'skip-limiter-cost': { type: 'boolean', default: false },
    conversations: { type: 'string', default: '10000' },
    /** Also seed a second account (100,000 conversations x 10 messages) and drive the analytics. */
    analytics: { type: 'boolean', default: false },
    'analytics-conversations': { type: 'string', default: '100000' },
    /** Skip the webhooks fan-out (events/s to 1, 10 and 100 subscriptions, event-to-delivery latency). */
    'skip-webhooks': { type: 'boolean', default: false },
    port: { type: 'string', default: '3900' },
    /** After seeding: CHECKPOINT and pg_prewarm, as on a server that has run a while (bench:scale). */
    prewarm: { type: 'boolean', default: false },
    /**
     * Instead of --conversations: one account per size (e.g. `10000,1000000`) in the same
     * database, each endpoint driven on them in alternating slices, and the largest compared
     * with the smallest (bench:scale).
     */
    sizes: { type: 'string' },
  },
});

const ADMIN_URL = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DATABASE_NAME = process.env.BENCH_DATABASE ?? 'cms_bench';
/**
 * Its own RabbitMQ virtual host (made at start, deleted at the end) as well as its own database:
 * on the default vhost a running instance would consume the bench's commands and write them
 * into its own database (and the other way round).
 */
const VHOST = process.env.BENCH_VHOST ?? 'cms_bench';
const AMQP_URL = `${(process.env.BENCH_AMQP_BASE_URL ?? 'amqp://guest:guest@127.0.0.1:5672').replace(/\/$/, '')}/${VHOST}`;
const DATABASE_URL = ADMIN_URL.replace(/\/[^/]*$/, `/${DATABASE_NAME}`);
const conversations = Number(args.conversations);
/** Whose messages' events a seeded account's outbox holds (100,000 events: seedAccount's `events`). */
const SEEDED_EVENTS_CONVERSATIONS = 10_000;
const base = `http://127.0.0.1:${args.port}`;
const unlimitedBase = `http://127.0.0.1:${Number(args.port) + 1}`;

/**
 * The limiter's cost (BENCHMARKS.md): `get` through the limited and the unlimited gateway in
 * alternating slices, so that the machine's drift (a third of a run's CPU per request on these
 * shared VMs) falls on both alike. CPU per request, not throughput; the limiter runs in the
 * gateway and Redis only, so the other processes' difference is noise.
 */
async function benchLimiterCost(requests: autocannon.Request[], out: string): Promise<void> {
  const slices = 4;
  const durationSeconds = Math.max(2, Math.round(Number(args.duration) / slices));
  const drive = (url: string, label: string) =>
    runLoad(label, { url, connections: Number(args.connections), requests, durationSeconds });
  await runLoad('get/warmup', {
    url: unlimitedBase,
    connections: Number(args.connections),
    requests,
    durationSeconds: Number(args.warmup),
  });
  const limitedSlices: LoadResult[] = [];
  const unlimitedSlices: LoadResult[] = [];
  for (let slice = 0; slice < slices; slice++) {
    limitedSlices.push(await drive(base, 'limited'));
    unlimitedSlices.push(await drive(unlimitedBase, 'unlimited'));
  }
  const limited = combineLoads('stack/get, limiter on', limitedSlices);
  const unlimited = combineLoads('stack/get, limiter off', unlimitedSlices);
  for (const row of [limited, unlimited]) {
    console.log(formatRow(row));
    appendFileSync(out, `${JSON.stringify({ ...row, conversations, at: new Date().toISOString() })}\n`);
  }
  const gateway = limited.cpuMicros.gateway - unlimited.cpuMicros.gateway;
  const redis = limited.cpuMicros.redis - unlimited.cpuMicros.redis;
  const share = (((gateway + redis) / unlimited.cpuMicros.total) * 100).toFixed(1);
  const signed = (us: number) => (us < 0 ? `${us}` : `+${us}`);
  console.log(
    `# rate limiter cost on get (${slices} alternating slices of ${durationSeconds} s each): ${gateway + redis} us of server CPU per request (${share}% of the ${unlimited.cpuMicros.total} us without it): gateway ${signed(gateway)} us, redis ${signed(redis)} us; whole stack ${signed(limited.cpuMicros.total - unlimited.cpuMicros.total)} us`,
  );
}

/**
 * Flat as data grows (BENCHMARKS.md): the same endpoints on accounts of different sizes in one database, in
 * alternating slices (3 per size), so the machine's drift falls on every size alike.
 */
async function benchSizes(sizes: number[], out: string): Promise<void> {
  const accounts: Array<{ size: number; load: ReturnType<typeof workloads> }> = [];
  for (const [index, size] of sizes.entries()) {
    const { accountId, apiKey } = await createBenchAccount(`bench-${size}`);
    const started = Date.now();
    await seedAccount(DATABASE_URL, accountId, size, 10, index, { events: SEEDED_EVENTS_CONVERSATIONS });
    console.log(`# seeded ${size} conversations x 10 messages in ${Date.now() - started} ms`);
    accounts.push({ size, load: workloads(apiKey, size, index) });
  }
  if (args.prewarm) await settleAfterLoad(DATABASE_URL);
  const rounds = 3;
  const durationSeconds = Math.max(2, Math.round(Number(args.duration) / rounds));
  for (const endpoint of args.endpoints.split(',').filter(Boolean) as Array<
    keyof ReturnType<typeof workloads>
  >) {
    const drive = (account: (typeof accounts)[number], label: string, seconds: number) =>
      runLoad(label, {
        url: base,
        connections: Number(args.connections),
        requests: account.load[endpoint],
        durationSeconds: seconds,
      });
    for (const account of accounts) await drive(account, 'warmup', Number(args.warmup));
    const slices = accounts.map(() => [] as LoadResult[]);
    for (let round = 0; round < rounds; round++) {
      for (const [index, account] of accounts.entries()) {
        slices[index].push(await drive(account, `slice ${round}`, durationSeconds));
      }
    }
    const rows = accounts.map((account, index) =>
      combineLoads(`stack/${endpoint} @${account.size}`, slices[index]),
    );
    for (const [index, row] of rows.entries()) {
      console.log(formatRow(row));
      appendFileSync(
        out,
        `${JSON.stringify({ ...row, conversations: accounts[index].size, at: new Date().toISOString() })}\n`,
      );
    }
    const [smallest, largest] = [rows[0], rows[rows.length - 1]];
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    console.log(
      `# ${endpoint}: ${accounts[accounts.length - 1].size} against ${accounts[0].size} conversations: p50 ${ratio(largest.p50, smallest.p50)}x, p99 ${ratio(largest.p99, smallest.p99)}x, CPU per request ${ratio(largest.cpuMicros.total, smallest.cpuMicros.total)}x (postgres ${ratio(largest.cpuMicros.postgres, smallest.cpuMicros.postgres)}x)`,
    );
  }
}

async function createBenchAccount(name = 'bench'): Promise<{ accountId: string; apiKey: string }> {
  const db = new DataSource(gatewayDataSourceOptions({ DATABASE_URL, DATABASE_POOL_SIZE: 1 }));
  await db.initialize();
  try {
    const accounts = new AccountsRepository(db);
    const account = await accounts.createAccount(name, 'business');
    const { apiKey } = await accounts.createKey(account.id);
    return { accountId: account.id, apiKey };
  } finally {
    await db.destroy();
  }
}

function workloads(apiKey: string, size = conversations, accountIndex = 0) {
  const auth = { authorization: `Bearer ${apiKey}` };
  const randomConversation = () => conversationIdFor(Math.floor(Math.random() * size), accountIndex);
  // Every fifth seeded conversation is closed; messages go to open ones so every send is a 201.
  const randomOpenConversation = () => {
    const i = Math.floor(Math.random() * size);
    return conversationIdFor(i % 5 === 0 ? (i + 1) % size : i, accountIndex);
  };
  let sent = 0;
  return {
    list: [
      { method: 'GET' as const, path: '/v1/conversations?limit=20&offset=0&status=active', headers: auth },
    ],
    get: [
      {
        method: 'GET' as const,
        headers: auth,
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          path: `/v1/conversations/${randomConversation()}`,
        }),
      },
    ],
    send: [
      {
        method: 'POST' as const,
        headers: { ...auth, 'content-type': 'application/json' },
        setupRequest: (request: autocannon.Request) => ({
          ...request,
          path: `/v1/conversations/${randomOpenConversation()}/messages`,
          body: JSON.stringify({
            sender: 'system',
            content: `load test message ${sent++} hello, is anyone there?`,
          }),
        }),
      },
    ],
  };
}

/** Both analytics endpoints: the default 30 days, and the longest range (400 days) in a DST zone. */
function analyticsWorkloads(apiKey: string) {
  const headers = { authorization: `Bearer ${apiKey}` };
  const to = new Date();
  const longest = `from=${new Date(to.getTime() - 400 * 86_400_000).toISOString()}&to=${to.toISOString()}&tz=Europe/Warsaw`;
  const get = (path: string) => [{ method: 'GET' as const, path, headers }];
  return {
    'summary 30d': get('/v1/analytics/summary'),
    'summary 400d': get(`/v1/analytics/summary?${longest}`),
    'timeseries day 30d': get('/v1/analytics/timeseries?metric=messages_received'),
    'timeseries week 400d': get(
      `/v1/analytics/timeseries?metric=conversations_closed&interval=week&${longest}`,
    ),
    'timeseries hour 400d': get(`/v1/analytics/timeseries?metric=messages_sent&interval=hour&${longest}`),
  };
}

async function benchAnalytics(out: string): Promise<void> {
  const count = Number(args['analytics-conversations']);
  const { accountId, apiKey } = await createBenchAccount('bench analytics');
  const started = Date.now();
  await seedAnalyticsAccount(DATABASE_URL, accountId, count, 10);
  console.log(
    `# analytics: seeded ${count} conversations x 10 messages over 365 days in ${Date.now() - started} ms`,
  );
  // One connection: the latency a client sees; eight: throughput with requests queueing on 2 cores.
  for (const [name, requests] of Object.entries(analyticsWorkloads(apiKey))) {
    for (const connections of [1, 8]) {
      const common = { url: base, connections, requests };
      await runLoad(`${name}/warmup`, { ...common, durationSeconds: Number(args.warmup) });
      const row = await runLoad(`analytics/${name} c=${connections}`, {
        ...common,
        durationSeconds: Number(args.duration),
      });
      console.log(formatRow(row));
      appendFileSync(
        out,
        `${JSON.stringify({ ...row, conversations: count, at: new Date().toISOString() })}\n`,
      );
    }
  }
}

/**
 * Subscriptions per account and events published for them, as fast as the broker confirms
 * (throughput, and latency when a burst queues), then at a steady light rate (latency unloaded).
 */
const FAN_OUT_SCENARIOS = [
  { subscriptions: 1, events: 2000 },
  { subscriptions: 10, events: 500 },
  { subscriptions: 100, events: 100 },
  { subscriptions: 1, events: 500, eventsPerSecond: 50 },
  { subscriptions: 10, events: 500, eventsPerSecond: 50 },
];

async function benchWebhooks(out: string): Promise<void> {
  const amqpUrl = AMQP_URL;
  for (const { subscriptions, events, eventsPerSecond } of FAN_OUT_SCENARIOS) {
    // An account per scenario, so each receiver gets only its own scenario's deliveries.
    const { accountId, apiKey } = await createBenchAccount(`bench webhooks x${subscriptions}`);
    const row = await benchFanOut({
      apiBase: base,
      apiKey,
      accountId,
      amqpUrl,
      subscriptions,
      events,
      eventsPerSecond,
    });
    console.log(formatFanOut(row));
    appendFileSync(out, `${JSON.stringify({ ...row, at: new Date().toISOString() })}\n`);
  }
}

async function main(): Promise<void> {
  const services = new ServiceProcesses();
  const resultsDir = path.resolve(__dirname, '..', '..', 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const out = path.join(resultsDir, `run-${new Date().toISOString().replace(/[:.]/g, '')}.jsonl`);
  // The quota is raised out of reach so every request pays the full limiter check and is admitted.
  const env = {
    DATABASE_URL,
    AMQP_URL,
    PORT: args.port,
    OPS_PORT: '0',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    RATE_LIMIT_BUSINESS: '1000000000',
    // The fan-out bench's receiver listens on 127.0.0.1.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  console.log(
    `# ${new Date().toISOString()} cores=${os.cpus().length} node=${process.version} c=${args.connections} d=${args.duration}s warmup=${args.warmup}s conversations=${conversations}`,
  );
  try {
    await recreateDatabase(ADMIN_URL, DATABASE_NAME);
    recreateVhost(VHOST);
    services.start('conversations', env);
    services.start('gateway', env);
    if (!args['skip-webhooks']) services.start('webhooks', env);
    await waitForReady(base);
    if (!args['skip-limiter-cost']) {
      services.start('gateway', { ...env, PORT: String(Number(args.port) + 1), RATE_LIMIT_ENABLED: 'false' });
      await waitForReady(unlimitedBase);
    }
    if (args.sizes) {
      await benchSizes(args.sizes.split(',').map(Number), out);
      return;
    }
    const { accountId, apiKey } = await createBenchAccount();
    const started = Date.now();
    await seedAccount(DATABASE_URL, accountId, conversations, 10, 0, { events: SEEDED_EVENTS_CONVERSATIONS });
    console.log(`# seeded ${conversations} conversations x 10 messages in ${Date.now() - started} ms`);
    if (args.prewarm) await settleAfterLoad(DATABASE_URL);

    const load = workloads(apiKey);
    const rows: LoadResult[] = [];
    for (const endpoint of args.endpoints.split(',').filter(Boolean) as Array<keyof typeof load>) {
      if (!load[endpoint]) throw new Error(`unknown endpoint ${endpoint}; use list, get, send`);
      const common = { url: base, connections: Number(args.connections), requests: load[endpoint] };
      await runLoad(`${endpoint}/warmup`, { ...common, durationSeconds: Number(args.warmup) });
      const row = await runLoad(`stack/${endpoint}`, { ...common, durationSeconds: Number(args.duration) });
      console.log(formatRow(row));
      appendFileSync(out, `${JSON.stringify({ ...row, conversations, at: new Date().toISOString() })}\n`);
      rows.push(row);
    }
    if (!args['skip-limiter-cost']) await benchLimiterCost(load.get, out);
    if (args.analytics) await benchAnalytics(out);
    if (!args['skip-webhooks']) await benchWebhooks(out);
    console.log(`# raw results: ${out}`);
  } finally {
    await services.stopAll();
    deleteVhost(VHOST);
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
