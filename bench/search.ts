import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { conversationsDataSourceOptions } from '../services/conversations/src/data-source';
import {
  filterParameter,
  ListFilters,
  listPagesStatement,
  usedFilters,
} from '../services/conversations/src/conversations/conversations.sql';
import {
  BENCH_ADMIN_URL,
  benchDatabaseUrl,
  recreateDatabase,
  seedAccount,
  type SeedExpressions,
} from './bench-seed';
import { type PlanNode, planScans } from './query-plan';

/**
 * `npm run bench:search`: the first page of the conversation list searched (`q`) and filtered by
 * tag, in a database of its own (`cms_bench_search`, recreated) holding one account of
 * CONVERSATIONS (default 1,000,000) conversations of 10 messages each (10,000,000 messages) and
 * OTHERS (default 2) accounts of 20,000 with the same words, so the account's filter is exercised.
 * Each case runs RUNS times in turn (sequentially, one connection, the service's statement as it
 * is prepared); prints p50 and p99 of the client-side time, the total and the plan's scans.
 *
 * The words, in Polish as typed by its users: `zamówienie` in 1 message of 100 (about 10% of
 * conversations), `paczka` and `zwrot` in 1 of 50 each, `żółw` in 10 conversations of the account
 * (and of each other account), and `slowoN`, N of 20,000, twice in every message (each in about 1,000
 * conversations). Tags: `billing` on
 * 1 conversation in 10, `vip` on 1 in 100.
 */

const DATABASE = 'cms_bench_search';
const DATABASE_URL = benchDatabaseUrl(DATABASE);
const CONVERSATIONS = Number(process.env.CONVERSATIONS ?? 1_000_000);
const OTHERS = Number(process.env.OTHERS ?? 2);
const RUNS = Number(process.env.RUNS ?? 50);
const MESSAGES_PER_CONVERSATION = 10;

/** A number of the message, from its conversation and place: the same words in every run. */
const draw = (salt: string, modulo: number) => `abs(hashtext(c.id::text || k || '${salt}')) % ${modulo}`;
const conversationNumber = `('x' || right(c.id::text, 12))::bit(48)::bigint`;
const rare = `k = 3 AND ${conversationNumber} % (${CONVERSATIONS}::int / 10) = 7`;
const SEED: SeedExpressions = {
  tags: `CASE WHEN i % 100 = 1 THEN ARRAY['billing', 'vip'] WHEN i % 10 = 1 THEN ARRAY['billing'] ELSE '{}' END`,
  bulk: true,
  content: `concat_ws(' ', 'Dzień dobry, pytanie o', 'slowo' || ${draw('a', 20000)}, 'i', 'slowo' || ${draw('b', 20000)},
      CASE WHEN ${draw('c', 100)} = 0 THEN 'Zamówienie' END, CASE WHEN ${draw('d', 50)} = 0 THEN 'paczka' END,
      CASE WHEN ${draw('e', 50)} = 0 THEN 'zwrot' END,
      CASE WHEN ${rare} THEN 'Żółw' END, '- dziękuję.')`,
};

/**
 * The seeded conversations' words, written straight from what the messages were made of: folding
 * ten million messages (the migration's backfill) takes an hour on a loaded 2-core machine. A
 * sample is checked against the service's own function (conversation_search_words).
 */
const SEEDED_WORDS = `array_to_tsvector(ARRAY(SELECT DISTINCT word FROM (
    SELECT unnest(ARRAY['seeded', 'conversation', substring(c.subject FROM '[0-9]+$')]) AS word
    UNION ALL
    SELECT unnest(ARRAY['dzien', 'dobry', 'pytanie', 'o', 'i', 'dziekuje', 'slowo' || ${draw('a', 20000)},
                        'slowo' || ${draw('b', 20000)}, CASE WHEN ${draw('c', 100)} = 0 THEN 'zamowienie' END,
                        CASE WHEN ${draw('d', 50)} = 0 THEN 'paczka' END, CASE WHEN ${draw('e', 50)} = 0 THEN 'zwrot' END,
                        CASE WHEN ${rare} THEN 'zolw' END])
      FROM generate_series(1, ${MESSAGES_PER_CONVERSATION}) AS k) words WHERE word IS NOT NULL))`;

const CASES: Array<[string, ListFilters]> = [
  ['rare word (zolw)', { q: 'zolw' }],
  ['middling word (slowo1234, about 1,000 conversations)', { q: 'slowo1234' }],
  ['common word (zamowienie)', { q: 'zamowienie' }],
  ['two words (paczka zwrot)', { q: 'paczka zwrot' }],
  ['a common and a rare word (zamowienie zolw)', { q: 'zamowienie zolw' }],
  ['a rare word and one of every subject (zolw conversation)', { q: 'zolw conversation' }],
  ['tag (vip)', { tag: ['vip'] }],
  ['q + tag + status (zamowienie, billing, active)', { q: 'zamowienie', tag: ['billing'], status: 'active' }],
];

/** The service's connection settings (generic plans, no JIT), so the bench plans as it does. */
const SERVICE_SESSION = (
  conversationsDataSourceOptions({ DATABASE_URL, DATABASE_POOL_SIZE: 1 }) as { extra: { options: string } }
).extra.options;

async function main(): Promise<void> {
  const db = new Client({ connectionString: DATABASE_URL, options: SERVICE_SESSION });
  // REUSE=1 measures the database an earlier run seeded, its largest account.
  const accountId =
    process.env.REUSE === '1'
      ? await db.connect().then(async () => {
          const { rows } = await db.query<{ id: string }>(
            `SELECT account_id AS id FROM conversations.status_counts GROUP BY 1 ORDER BY sum(count) DESC LIMIT 1`,
          );
          return rows[0].id;
        })
      : await seed(db);
  await measure(db, accountId);
  await db.end();
}

/** Recreates the database and seeds it; the big account's id. */
async function seed(db: Client): Promise<string> {
  await recreateDatabase(BENCH_ADMIN_URL, DATABASE);
  const setup = new Client({ connectionString: DATABASE_URL });
  await setup.connect();
  await setup.query('CREATE SCHEMA conversations');
  await setup.end();
  const migrations = new DataSource(
    conversationsDataSourceOptions({
      DATABASE_URL,
      DATABASE_POOL_SIZE: 1,
      DATABASE_QUERY_TIMEOUT_MS: 600_000,
    }),
  );
  await migrations.initialize();
  await migrations.runMigrations({ transaction: 'each' });
  await migrations.destroy();
  await db.connect();

  const started = Date.now();
  const accountId = randomUUID();
  // Loaded without indexes, which are then built from their definitions (the index of the
  // messages' words computes the words of every message), as a migration would on an existing
  // database: the seed's time includes theirs.
  await withoutIndexes(db, ['conversations.conversations', 'conversations.messages'], async () => {
    await seedAccount(DATABASE_URL, accountId, CONVERSATIONS, MESSAGES_PER_CONVERSATION, 0, SEED);
    for (let other = 1; other <= OTHERS; other += 1)
      await seedAccount(DATABASE_URL, randomUUID(), 20_000, MESSAGES_PER_CONVERSATION, other, SEED);
    await db.query(`UPDATE conversations.conversations c SET search_words = ${SEEDED_WORDS}`);
  });
  const { rows: differing } = await db.query<{ id: string }>(
    `SELECT id FROM (SELECT * FROM conversations.conversations TABLESAMPLE BERNOULLI (1) LIMIT 500) c
      WHERE search_words <> conversations.conversation_search_words(id, subject, visitor_name, visitor_email)`,
  );
  if (differing.length > 0) throw new Error(`seeded words differ from the service's: ${differing[0].id}`);
  console.log(`# seeded, indexes built and analysed in ${Date.now() - started} ms`);
  const { rows: sizes } = await db.query<{ name: string; size: string }>(
    `SELECT relname AS name, pg_size_pretty(pg_total_relation_size(oid)) AS size FROM pg_class
      WHERE relname IN ('conversations', 'messages', 'messages_account_words', 'conversations_account_detail_words')`,
  );
  console.log(`# sizes: ${sizes.map((row) => `${row.name} ${row.size}`).join(', ')}`);
  return accountId;
}

async function measure(db: Client, accountId: string): Promise<void> {
  console.log(`case | p50 ms | p99 ms | total (+: a lower bound) | scans (of ${RUNS} runs, after a warm-up)`);
  for (const [name, filters] of CASES) {
    const used = usedFilters(filters);
    const statement = listPagesStatement(used, 'desc');
    const params = [
      [accountId],
      [20],
      [0],
      [null],
      ...used.map((filter) => [filterParameter(filters[filter]!)]),
    ];
    const prepared = { name: `search_${used.join('_')}`, text: statement.text, values: params };
    await db.query(prepared);
    const timings: number[] = [];
    let total = '';
    for (let run = 0; run < RUNS; run += 1) {
      const begun = process.hrtime.bigint();
      const { rows } = await db.query<{ total: string; bounded: boolean }>(prepared);
      timings.push(Number(process.hrtime.bigint() - begun) / 1e6);
      total = `${rows[0].total}${rows[0].bounded ? '+' : ''}`;
    }
    const explained = await db.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (FORMAT JSON) ${statement.text}`,
      params,
    );
    timings.sort((a, b) => a - b);
    const at = (share: number) => timings[Math.min(timings.length - 1, Math.floor(share * timings.length))];
    console.log(
      `${name} | ${at(0.5).toFixed(1)} | ${at(0.99).toFixed(1)} | ${total} | ${planScans(explained.rows[0]['QUERY PLAN'][0].Plan)}`,
    );
  }
}

/**
 * Runs `load` with the tables' indexes and unique keys dropped, then builds them again from their
 * own definitions: ten million rows load in minutes rather than an hour of random index inserts.
 */
async function withoutIndexes(db: Client, tables: string[], load: () => Promise<void>): Promise<void> {
  // Foreign keys last to be added, first to go.
  const { rows: keys } = await db.query<{ name: string; table: string; definition: string }>(
    `SELECT conname AS name, conrelid::regclass::text AS table, pg_get_constraintdef(oid) AS definition
       FROM pg_constraint
      WHERE (conrelid = ANY($1::regclass[]) AND contype IN ('p', 'u')) OR confrelid = ANY($1::regclass[])
      ORDER BY contype = 'f'`,
    [tables],
  );
  const { rows: indexes } = await db.query<{ name: string; definition: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
       FROM pg_index i WHERE i.indrelid = ANY($1::regclass[])
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)`,
    [tables],
  );
  for (const index of indexes) await db.query(`DROP INDEX ${index.name}`);
  for (const key of [...keys].reverse())
    await db.query(`ALTER TABLE ${key.table} DROP CONSTRAINT ${key.name}`);
  await load();
  await db.query(`SET maintenance_work_mem = '1GB'`);
  for (const key of keys)
    await db.query(`ALTER TABLE ${key.table} ADD CONSTRAINT ${key.name} ${key.definition}`);
  for (const index of indexes) await db.query(index.definition);
  for (const table of tables) await db.query(`VACUUM ANALYZE ${table}`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
