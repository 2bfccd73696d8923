import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { conversationsDataSourceOptions } from '../services/conversations/src/data-source';
import {
  ListFilters,
  listPagesStatement,
  usedFilters,
} from '../services/conversations/src/conversations/conversations.sql';
import { BENCH_ADMIN_URL, benchDatabaseUrl, recreateDatabase, seedAccount } from './bench-seed';
import { type PlanNode, planScans } from './query-plan';

/**
 * `npm run bench:list-filters`: the conversation list's statement for each filter and order on one
 * account of CONVERSATIONS (default 1,000,000) conversations, in a database of its own
 * (`cms_bench_lists`, recreated), with Postgres's own timing of each (EXPLAIN ANALYZE, median of
 * five runs after a warm-up) and the plan's top node, so an index plan that stops fitting shows.
 */

const DATABASE = 'cms_bench_lists';
const DATABASE_URL = benchDatabaseUrl(DATABASE);
const CONVERSATIONS = Number(process.env.CONVERSATIONS ?? 1_000_000);
const RUNS = 5;

async function main(): Promise<void> {
  await recreateDatabase(BENCH_ADMIN_URL, DATABASE);
  const setup = new Client({ connectionString: DATABASE_URL });
  await setup.connect();
  await setup.query('CREATE SCHEMA conversations');
  await setup.end();
  const migrations = new DataSource(conversationsDataSourceOptions({ DATABASE_URL, DATABASE_POOL_SIZE: 1 }));
  await migrations.initialize();
  await migrations.runMigrations({ transaction: 'each' });
  await migrations.destroy();

  const accountId = randomUUID();
  let started = Date.now();
  await seedAccount(DATABASE_URL, accountId, CONVERSATIONS, 0);
  const db = new Client({ connectionString: DATABASE_URL });
  await db.connect();
  // One visitor email per 10 conversations, 1 in 10 recently updated: what a CRM sync would look for.
  await db.query(
    `UPDATE conversations.conversations
                     SET visitor_email = 'visitor' || (hashtext(id::text) & 1048575) % ($1::int / 10) || '@example.com'`,
    [CONVERSATIONS],
  );
  await db.query(`UPDATE conversations.conversations SET updated_at = now() - interval '1 minute' * (hashtext(id::text) & 1023)
                   WHERE hashtext(id::text) % 100 = 0`);
  await db.query('VACUUM ANALYZE conversations.conversations');
  console.log(`# ${CONVERSATIONS} conversations seeded in ${Date.now() - started} ms`);

  const { rows } = await db.query<{ created_at: Date }>(
    `SELECT created_at FROM conversations.conversations ORDER BY created_at DESC OFFSET $1 LIMIT 1`,
    [Math.floor(CONVERSATIONS / 2)],
  );
  const middle = rows[0].created_at.toISOString();
  const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const cases: Array<[string, ListFilters, 'asc' | 'desc']> = [
    ['no filter', {}, 'desc'],
    ['status=active', { status: 'active' }, 'desc'],
    ['created_after (last day)', { created_after: dayAgo }, 'desc'],
    ['created_after (half the account)', { created_after: middle }, 'desc'],
    ['created_before (older half), asc', { created_before: middle }, 'asc'],
    ['status + created_after (half)', { status: 'active', created_after: middle }, 'desc'],
    ['updated_after (last hour)', { updated_after: hourAgo }, 'desc'],
    ['visitor_email', { visitor_email: 'VISITOR42@example.com' }, 'desc'],
    ['order=asc', {}, 'asc'],
  ];
  console.log('case | first page ms (median of 5) | total | plan of the page');
  for (const [name, filters, order] of cases) {
    const used = usedFilters(filters);
    const statement = listPagesStatement(used, order);
    // A batch of one page: each parameter is an array of one element.
    const params = [[accountId], [20], [0], [null], ...used.map((name) => [filters[name]])];
    const timings: number[] = [];
    let plan = '';
    let total = 0;
    for (let run = 0; run <= RUNS; run += 1) {
      started = Date.now();
      const result = await db.query<{ 'QUERY PLAN': Explained[] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
        params,
      );
      const explained = result.rows[0]['QUERY PLAN'][0];
      if (run > 0) timings.push(explained['Execution Time'] + explained['Planning Time']);
      plan = planScans(explained.Plan);
    }
    total = Number((await db.query<{ total: string }>(statement.text, params)).rows[0].total);
    timings.sort((a, b) => a - b);
    console.log(`${name} | ${timings[Math.floor(RUNS / 2)].toFixed(1)} | ${total} | ${plan}`);
  }
  await db.end();
}

/** `EXPLAIN (ANALYZE, FORMAT JSON)`'s result, as far as this bench reads it. */
interface Explained {
  'Execution Time': number;
  'Planning Time': number;
  Plan: PlanNode;
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
